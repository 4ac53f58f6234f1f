"""Rasa's LogisticRegressionClassifier without two copies Rasa makes for every message it scores.

Named in config.yml (Rasa's extension point for NLU components) in place of `LogisticRegressionClassifier`: it
trains, saves and loads exactly as Rasa's (it is a subclass; the model files are Rasa's), and gives the same
probabilities. What differs, measured on this project's model:

1. The weights are laid out for the product it computes. Rasa scores a message with scikit-learn's `X @ coef_.T`
(X sparse, one row). With `coef_` in C order (as trained and loaded), SciPy first copies the transposed matrix into a
contiguous block (intents x vocabulary, about 4 MB here) for every message. Stored in Fortran order, `coef_.T` is
contiguous and the product reads it in place: same values, same probabilities, 0.23 -> 0.03 ms per message (more
under load: memory bandwidth). Done when the model is loaded.

2. The one-row input. Rasa builds it with `vstack([hstack([csr(sparse), csr([])])])`: SciPy's block assembly for a
matrix it only re-types. For one message without dense features (this pipeline's case) the input is the sparse
sentence features as a float64 CSR matrix: the same shape, values and type; 7 % of a turn in a cProfile run
(2026-12-01), most of it `get_sparse_features` joining the per-token features the classifier does not read. Other
cases go through Rasa's code.

tests/test_rasa_patches.py compares both with Rasa's own class, imported from rasa.
"""
from __future__ import annotations

from typing import Any, Dict, List, Text

import numpy as np
from rasa.engine.graph import ExecutionContext
from rasa.engine.recipes.default_recipe import DefaultV1Recipe
from rasa.engine.storage.resource import Resource
from rasa.engine.storage.storage import ModelStorage
from rasa.nlu.classifiers.logistic_regression_classifier import LogisticRegressionClassifier
from rasa.shared.nlu.constants import TEXT
from rasa.shared.nlu.training_data.message import Message
from scipy.sparse import csr_matrix


def weights_for_scoring(classifier: Any) -> Any:
    """The fitted scikit-learn model of a loaded classifier, its `coef_` in Fortran order."""
    model = getattr(classifier, "clf", None)
    if model is not None and getattr(model, "coef_", None) is not None:
        model.coef_ = np.asfortranarray(model.coef_)
    return classifier


def one_message_input(message: Message) -> Any:
    """The classifier's input row for `message` when it has sparse sentence features and no dense ones, else None.

    `Message.get_sparse_features(TEXT)[1]`, without combining the sequence features it also builds."""
    _, sentence_features = message._filter_sparse_features(TEXT, [])
    sparse = message._combine_features(sentence_features, [])
    dense = message.get_dense_features(attribute=TEXT)[1]
    if sparse is None or dense is not None:
        return None
    features = csr_matrix(sparse.features)
    return features.astype(np.result_type(features.dtype, np.float64), copy=False)


@DefaultV1Recipe.register([DefaultV1Recipe.ComponentType.INTENT_CLASSIFIER], is_trainable=True)
class AdvisorLogisticRegressionClassifier(LogisticRegressionClassifier):
    """LogisticRegressionClassifier scoring in place (see the module docstring)."""

    @classmethod
    def load(cls, config: Dict[Text, Any], model_storage: ModelStorage, resource: Resource,
             execution_context: ExecutionContext, **kwargs: Any) -> LogisticRegressionClassifier:
        return weights_for_scoring(super().load(config, model_storage, resource, execution_context, **kwargs))

    def _create_X(self, messages: List[Message]) -> csr_matrix:
        if len(messages) == 1:
            row = one_message_input(messages[0])
            if row is not None:
                return row
        return super()._create_X(messages)
