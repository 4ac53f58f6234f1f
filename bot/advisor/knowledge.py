"""The advisor's knowledge base: GPU catalogue, model presets, pricing, FAQ and user-facing texts.

Everything is read from ``knowledge/*.yml`` once, validated with pydantic (v1) models and cached. A broken file
fails loudly with :class:`KnowledgeError` naming the file, the field and the reason, so a bad edit is caught at
start-up and never turns into a wrong answer.
"""
from __future__ import annotations

import string
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, Iterable, List, Literal, Optional, Tuple, Union

from pydantic import BaseModel, Field, ValidationError, root_validator, validator

from bot.advisor.schema import ModelArch
from bot.advisor.vat import price_with_vat
from bot.knowledge import KnowledgeError, LocalizedText, display_name, parse_file

__all__ = ["KnowledgeError"]  # raised for a broken file; defined in the knowledge layer (bot/knowledge/files.py)

DEFAULT_ROOT = Path(__file__).resolve().parents[2] / "knowledge"
RELEASED_PATTERN = r"^\d{4}-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?$"
LANGS = ("fa", "tr", "en")


# ---------------------------------------------------------------------------------------------- errors


class InputError(ValueError):
    """Bad user input. ``field`` names the offending value, ``key`` is a text key in knowledge/texts.yml
    (``error_<key>``) and ``params`` fill its placeholders, so the message can be given in the user's language."""

    def __init__(self, field: str, key: str, message: str, **params: Any):
        self.field, self.key, self.params = field, key, params
        super().__init__(f"{field}: {message}")


class UnknownModel(InputError):
    """No preset matches the model the user named; ``suggestions`` are the closest preset ids.

    When the name belongs to a known family and gives a size, ``substitute`` is the same-family preset the advisor
    would use instead, ``differences`` how that stand-in may differ (codes of
    :func:`substitute_differences`), ``family`` the family id and ``requested_size_b`` the size typed. The user
    never gave "only a size" here: they named a model we do not know."""

    def __init__(self, query: Any, suggestions: List[str], *, family: Optional[str] = None,
                 substitute: Optional[str] = None, requested_size_b: Optional[float] = None,
                 differences: Optional[List[str]] = None):
        self.query, self.suggestions = query, list(suggestions)
        self.family, self.substitute, self.requested_size_b = family, substitute, requested_size_b
        self.differences = list(differences or [])
        hint = f"; closest presets: {', '.join(self.suggestions)}" if self.suggestions else ""
        if substitute:
            hint += f"; same-family stand-in: {substitute} (may differ: {', '.join(self.differences)})"
        super().__init__("model", "unknown_model", f"unknown model {query!r}{hint}",
                         query=str(query), suggestions=", ".join(self.suggestions))


# ---------------------------------------------------------------------------------------------- file models


def duplicates(ids: Iterable[str]) -> List[str]:
    """The ids that occur more than once, sorted (for the knowledge files' uniqueness checks)."""
    ids = list(ids)
    return sorted({i for i in ids if ids.count(i) > 1})


def usable_within_marketed(usable_gib: float, values: Dict[str, Any]) -> float:
    """Validator body for a card's usable memory: memory chips come in binary sizes, so the GiB total nvidia-smi
    reports never exceeds the marketed number."""
    if "vram_gb" in values and usable_gib > values["vram_gb"]:
        raise ValueError(f"{usable_gib} GiB is more than the marketed {values['vram_gb']} GB")
    return usable_gib


class _Strict(BaseModel):
    class Config:
        extra = "forbid"
        allow_mutation = False


def _non_empty(v: str) -> str:
    if not isinstance(v, str) or not v.strip():
        raise ValueError("must be a non-empty text")
    return v


class Localized(_Strict):
    fa: str
    tr: str

    _fa = validator("fa", allow_reuse=True)(_non_empty)
    _tr = validator("tr", allow_reuse=True)(_non_empty)

    def __getitem__(self, lang: str) -> str:  # card.typical_use["fa"], as docs/architecture.md shows
        return getattr(self, lang)


class GpuCard(_Strict):
    id: str = Field(..., regex=r"^[a-z0-9][a-z0-9.-]*$")
    name: str
    vram_gb: float = Field(..., gt=0, le=2048)
    usable_gib: float = Field(..., gt=0, le=2048)
    price_usd_hour: float = Field(..., gt=0, le=1000)
    bf16_tflops: float = Field(..., gt=0, le=100000)
    bandwidth_gbs: float = Field(..., gt=0)
    nvlink: bool
    interconnect: Literal["nvlink", "pcie"]
    interconnect_source: str = Field(..., min_length=10)
    perf_class: str
    typical_use: Localized

    @validator("name")
    def _latin_name(cls, v):
        # GPU names stay in Latin script in every language.
        if not v or not all(ch in string.printable for ch in v):
            raise ValueError("must be a non-empty Latin-script name")
        return v

    @validator("usable_gib")
    def _usable_not_above_marketed(cls, v, values):
        return usable_within_marketed(v, values)

    @validator("interconnect")
    def _interconnect_matches_nvlink(cls, v, values):
        if "nvlink" in values and (v == "nvlink") != values["nvlink"]:
            raise ValueError(f"interconnect {v!r} disagrees with nvlink: {values['nvlink']}")
        return v


class ShapeExtras(_Strict):
    """Legacy block of models.yml (before the architecture schema grew these fields); merged into ``arch``."""

    head_dim: Optional[int] = Field(None, gt=0)
    qkv_bias: bool = False
    norms_per_layer: int = Field(2, ge=0, le=8)


class ModelEntry(_Strict):
    id: str = Field(..., regex=r"^[a-z0-9][a-z0-9.-]*$")
    display: str
    family: str = Field(..., regex=r"^[a-z0-9][a-z0-9.-]*$")
    size_b: float = Field(..., gt=0, le=5000)
    # When the weights were published: "YYYY-MM", or "YYYY-MM-DD" where two releases of one family and size share
    # a month. A family and a size typed without a version mean the newest release (newest_release below).
    released: str = Field(..., regex=RELEASED_PATTERN)
    released_source: str
    source: str
    published_params: int = Field(..., gt=0)
    published_source: str
    published_includes_vision: bool = False
    aliases: List[str] = []
    arch: Dict[str, Any]
    shape: Optional[ShapeExtras] = None
    params: Optional[int] = None
    notes: Optional[str] = None

    @root_validator(skip_on_failure=True)
    def _arch_valid(cls, values):
        fields = dict(values["arch"])
        if values.get("shape") is not None:
            fields.update(values["shape"].dict())
        if "name" in fields or "params" in fields:
            raise ValueError("arch: name and params are not arch fields (params is computed from the shapes)")
        try:
            arch = ModelArch(name=values["display"], **fields)
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(str(p) for p in first["loc"] if p != "__root__")
            raise ValueError(f"arch{'.' + loc if loc else ''}: {first['msg']}") from None
        except TypeError as exc:
            raise ValueError(f"arch: {exc}") from None
        stated = values.get("params")
        if stated is not None and stated != arch.params:
            raise ValueError(f"params {stated} does not match {arch.params} computed from the shapes")
        values["arch"] = fields
        return values


class FamilyEntry(_Strict):
    display: str
    # Words that name the family as people type them (Latin and Persian script); matched after tokenising.
    words: List[str] = Field(..., min_items=1)


class ModelsFile(_Strict):
    representative_by_size: Dict[float, str]
    families: Dict[str, FamilyEntry]
    models: List[ModelEntry]

    @root_validator(skip_on_failure=True)
    def _consistent(cls, values):
        ids = [m.id for m in values["models"]]
        dupes = duplicates(ids)
        if dupes:
            raise ValueError(f"duplicate model ids: {dupes}")
        unknown = sorted(set(values["representative_by_size"].values()) - set(ids))
        if unknown:
            raise ValueError(f"representative_by_size names unknown presets: {unknown}")
        families = sorted({m.family for m in values["models"]} - set(values["families"]))
        if families:
            raise ValueError(f"models name families missing under families: {families}")
        _check_releases(values["models"], values["families"])
        return values


def _check_releases(models: List[ModelEntry], families: Dict[str, FamilyEntry]) -> None:
    """"The newest release of a family in a size" must be well defined and must not be bypassed by an alias."""
    by_family_size: Dict[Tuple[str, float], List[ModelEntry]] = {}
    for entry in models:
        by_family_size.setdefault((entry.family, entry.size_b), []).append(entry)
    for (family, size), entries in by_family_size.items():
        for a, b in zip(*[sorted(entries, key=lambda e: release_key(e.released))[i:] for i in (0, 1)]):
            if a.released[:7] == b.released[:7] and (len(a.released) == 7 or len(b.released) == 7
                                                      or a.released == b.released):
                raise ValueError(f"{a.id} and {b.id} ({family}, {size:g}B) are both released {a.released[:7]}: "
                                 "give the days (YYYY-MM-DD) so the newest is known")
    from bot.advisor.model_names import _SIZE, _tokens  # the name reader (imports this module: loaded lazily)

    # family words without a digit: "qwen3 14b" names a version, "qwen 14b" does not
    family_words = {fid: {w.lower() for w in fam.words if not any(ch.isdigit() for ch in w)}
                    for fid, fam in families.items()}
    for entry in models:
        for alias in entry.aliases:
            words = alias.lower().split()
            if len(words) != 2 or words[0] not in family_words.get(entry.family, ()) \
                    or not _SIZE.fullmatch(words[1]):
                continue
            # other releases of that size whose names also hold both words ("magistral 24b" is one release)
            others = [e.id for e in by_family_size.get((entry.family, float(words[1][:-1])), [])
                      if e.id != entry.id and any(set(_tokens(alias)) <= set(_tokens(name))
                                                  for name in [e.id, e.display, *e.aliases])]
            if others:
                raise ValueError(f"alias {alias!r} of {entry.id}: {', '.join(others)} is the same family and "
                                 "size; a family and a size mean the newest release (by `released`), so remove "
                                 "the alias")


def release_key(released: Optional[str]) -> Tuple[int, int, int]:
    """"2025-06" -> (2025, 6, 0), "2025-06-20" -> (2025, 6, 20); unknown dates sort first."""
    year, month, day = ([int(part) for part in (released or "0-0").split("-")] + [0, 0])[:3]
    return year, month, day


class GpusFile(_Strict):
    gpus: List[GpuCard] = Field(..., min_items=1)

    @validator("gpus")
    def _unique_ids(cls, v):
        dupes = duplicates(g.id for g in v)
        if dupes:
            raise ValueError(f"duplicate gpu ids: {dupes}")
        return v


class Pricing(_Strict):
    currency: Literal["USD"]
    vat_rate: float = Field(..., ge=0, lt=1)

    def with_vat(self, usd: float) -> float:
        return price_with_vat(usd, self.vat_rate)


class FaqTopic(Localized):
    en: Optional[str] = None


class FaqFile(_Strict):
    topics: Dict[str, FaqTopic] = {}


Text = LocalizedText  # the one text model of the knowledge layer (bot/knowledge/texts.py)


class TextsFile(_Strict):
    texts: Dict[str, Text]


# ---------------------------------------------------------------------------------------------- public models


class ModelPreset(_Strict):
    id: str
    display: str
    family: str
    size_b: float
    source: str
    published_params: int
    published_source: str
    published_includes_vision: bool = False
    aliases: List[str]
    arch: ModelArch
    released: Optional[str] = None  # "YYYY-MM[-DD]"; None for a custom model (a pasted config, a plan file)


class ResolvedModel(_Strict):
    """The preset a query resolved to. ``by_size``: the user gave only a size. ``unrecognised``: the user named a
    model no preset matches and ``preset`` is a same-family stand-in (only with ``allow_substitute=True``);
    ``differences`` then lists how the stand-in may differ (codes, see :func:`substitute_differences`).
    ``version_assumed``: the user named a family and a size but no version, several releases match, and
    ``preset`` is the newest of them (:func:`newest_release`); the answer says which version it assumed."""

    preset: ModelPreset
    by_size: bool
    version_assumed: bool = False
    requested_size_b: Optional[float] = None
    unrecognised: Optional[str] = None
    differences: List[str] = []


class Knowledge(_Strict):
    gpus: List[GpuCard]
    models: List[ModelPreset]
    representative_by_size: Dict[float, str]
    families: Dict[str, FamilyEntry] = {}
    pricing: Pricing
    faq: Dict[str, FaqTopic]
    texts: Dict[str, Text]

    def gpu(self, gpu_id: str) -> GpuCard:
        for card in self.gpus:
            if card.id == gpu_id:
                return card
        raise KeyError(gpu_id)

    def model(self, preset_id: str) -> ModelPreset:
        for preset in self.models:
            if preset.id == preset_id:
                return preset
        raise KeyError(preset_id)

    def text(self, key: str, lang: str, **params: Any) -> str:
        """The text ``key`` in ``lang`` with its placeholders filled."""
        entry = self.texts[key]
        template = getattr(entry, lang if lang in LANGS else "en")
        return template.format(**params)


# ---------------------------------------------------------------------------------------------- loading


def count_params(arch) -> int:
    """Exact parameter count of a language model from its shapes (a ModelArch, or anything with its fields)."""
    from bot.advisor.architecture import count_params as _count

    return _count(arch)


# Each file is read and validated by the knowledge layer (bot/knowledge/files.py: parse_file, display_name).
_display = display_name


def _build_presets(models_file: ModelsFile) -> List[ModelPreset]:
    presets = []
    for entry in models_file.models:
        arch = ModelArch(name=entry.display, **entry.arch)
        presets.append(ModelPreset(id=entry.id, display=entry.display, family=entry.family, size_b=entry.size_b,
                                   source=entry.source, published_params=entry.published_params,
                                   published_source=entry.published_source,
                                   published_includes_vision=entry.published_includes_vision,
                                   aliases=entry.aliases, arch=arch, released=entry.released))
    return presets


@lru_cache(maxsize=8)
def _load(root: Path) -> Knowledge:
    gpus = parse_file(GpusFile, root / "gpus.yml")
    models_path = root / "models.yml"
    models = parse_file(ModelsFile, models_path)
    try:
        presets = _build_presets(models)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise KnowledgeError(_display(models_path), ".".join(map(str, first["loc"])), first["msg"]) from None
    pricing = parse_file(Pricing, root / "pricing.yml")
    faq_path = root / "faq.yml"
    # faq.yml is written by another part of the project; until it exists the FAQ is simply empty.
    faq = parse_file(FaqFile, faq_path).topics if faq_path.exists() else {}
    texts_path = root / "texts.yml"
    texts = parse_file(TextsFile, texts_path).texts if texts_path.exists() else {}
    known_classes = _known_perf_classes()
    for index, card in enumerate(gpus.gpus):
        if known_classes is not None and card.perf_class not in known_classes:
            raise KnowledgeError(_display(root / "gpus.yml"), f"gpus.{index}.perf_class",
                                 f"unknown class {card.perf_class!r}; known: {sorted(known_classes)}")
    return Knowledge(gpus=gpus.gpus, models=presets, representative_by_size=models.representative_by_size,
                     families=models.families, pricing=pricing, faq=faq, texts=texts)


def _known_perf_classes():
    try:
        from bot.advisor.throughput import UTILISATION
    except ImportError:  # throughput is optional for loading the catalogue
        return None
    return set(UTILISATION)


def load_knowledge(root: Union[str, Path, None] = None) -> Knowledge:
    """Load and validate every knowledge file (cached: each folder is read once per process)."""
    return _load(Path(root).resolve() if root else DEFAULT_ROOT)


# ---------------------------------------------------------------------------------------------- model lookup
# The name lookup lives in bot/advisor/model_names.py; these wrappers keep the knowledge module's interface (they look
# the function up at call time, so either module may be imported first).


def resolve_model(*args, **kwargs):
    from bot.advisor import model_names

    return model_names.resolve_model(*args, **kwargs)



def match_model(*args, **kwargs):
    from bot.advisor import model_names

    return model_names.match_model(*args, **kwargs)

def family_of(*args, **kwargs):
    from bot.advisor import model_names

    return model_names.family_of(*args, **kwargs)


def substitute_differences(*args, **kwargs):
    from bot.advisor import model_names

    return model_names.substitute_differences(*args, **kwargs)


def newest_release(*args, **kwargs):
    from bot.advisor import model_names

    return model_names.newest_release(*args, **kwargs)
