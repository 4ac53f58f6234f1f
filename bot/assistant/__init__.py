"""The Rasa glue: NLU components, input channels (Telegram, socket.io) and the redacting tracker store.

The only part of `bot` that imports rasa ; config.yml, credentials*.yml and endpoints*.yml
name classes in here."""

# Patches to Rasa that must be in effect in every Rasa process of this project (run, shell, test): importing this
# package is what those processes have in common.
from bot.assistant import fast_validation  # noqa: E402,F401  action responses: schema validator built once
from bot.assistant import fast_events  # noqa: E402,F401  event classes by name from a table
from bot.assistant import fast_model  # noqa: E402,F401  model inference: sub-graphs once, classifier weights
from bot.assistant import fast_rules  # noqa: E402,F401  rule lookup bounded by the longest rule
from bot.assistant import fast_states  # noqa: E402,F401  past states once per tracker state
from bot.assistant import fast_copies  # noqa: E402,F401  slot copies direct; debug-line copies only at debug level
from bot.assistant import action_keepalive  # noqa: E402,F401  action-server calls on kept-alive connections
from bot.assistant import action_payload  # noqa: E402,F401  domain sent without responses to actions
from bot.assistant import validation_once  # noqa: E402,F401  slot-mapping validation once per message
from bot.assistant import in_process_actions  # noqa: E402,F401  validation actions run inside Rasa
from bot.assistant import action_timeout  # noqa: E402,F401  action server slow or down: answer within seconds
from bot.assistant import store_unavailable  # noqa: E402,F401  conversation store down: answered, not swallowed
from bot.assistant import payload_depth  # noqa: E402,F401  a payload's JSON nested too deeply: no entities
