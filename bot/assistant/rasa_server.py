"""`rasa run` with the settings this product needs for safety, none of them on the command line.

    RASA_TOKEN=... python -m bot.assistant.rasa_server run --model models/gpu-advisor.tar.gz --enable-api ...

Same arguments as `rasa`; in addition (security review findings 8, 10, 13):

- the HTTP API token comes from RASA_TOKEN or RASA_TOKEN_FILE (bot/secret_files.py) and is handed to Rasa inside
  this process: `ps` shows no token (`rasa run --auth-token ...` showed it to every local account);
- CORS (`--cors`) is the list of allowed origins (bot/origins.py; default: the website's own origin) unless given;
  `*` is never used;
- a request body is at most SANIC_REQUEST_MAX_SIZE bytes (default 1 MiB; Sanic's own default is 100 MB);
- conversation ids in API paths are percent-decoded once, as bot/staff/rasa_api.py encodes them, so a sender id
  with `@ : + / space`, quotes or non-ASCII reaches its own conversation and not a phantom one;
- files this process creates (tracker.db, logs it opens) are readable by their owner only, and every log record is
  masked (bot/privacy/).
"""
from __future__ import annotations

import ctypes
import gc
import logging
import os
import sys
import urllib.parse
from typing import Any, Callable, List, Optional

from bot.origins import allowed_origins
from bot.secret_files import private_umask, read_secret

DEFAULT_MAX_BODY = 1024 * 1024
TOKEN_ENV = "RASA_TOKEN"


def _decode_conversation_id(request: Any) -> None:
    match = getattr(request, "match_info", None)
    if isinstance(match, dict) and isinstance(match.get("conversation_id"), str):
        match["conversation_id"] = urllib.parse.unquote(match["conversation_id"])


def _extend_app_factory(module: Any, name: str, marker: str, extend: Callable[[Any], Any]) -> None:
    """Wrap `module.name`, a function that builds a Sanic app, so that `extend(app)` runs on every app it builds
    (once: a wrapped factory carries `marker`)."""
    original = getattr(module, name)
    if getattr(original, marker, False):
        return

    def factory(*args: Any, **kwargs: Any):
        app = original(*args, **kwargs)
        extend(app)
        return app

    setattr(factory, marker, True)
    setattr(module, name, factory)


def _patch_rasa_app() -> None:
    """Register the conversation-id decoding on the app Rasa builds for its HTTP API."""
    from rasa import server

    _extend_app_factory(server, "create_app", "_decodes_ids",
                        lambda app: app.register_middleware(_decode_conversation_id, "request"))


def build_argv(argv: List[str]) -> List[str]:
    """The arguments Rasa sees: the caller's, plus the token and CORS origins when not given."""
    argv = list(argv)
    if argv and argv[0] == "run" and "actions" not in argv[1:2]:
        token = read_secret(TOKEN_ENV)
        if token and "--auth-token" not in argv:
            argv += ["--auth-token", token]
        if "--cors" not in argv:
            argv += ["--cors", *allowed_origins()]
    return argv


# Optional imports of TensorFlow/Keras that the Rasa server never uses, with the resident memory they take (issue 10,
# target 650 MB): JAX (TF 2.12 depends on it; tensorflow/lite/python/util.py imports it for a converter helper,
# 105 MB), h5py (Keras' .h5 model files; Rasa's models are not stored that way, 12 MB), TensorBoard (TF hooks its
# summary writers into tf.summary for training logs, and fsspec with it) and pytest (scikit-learn's test helpers,
# pulled in by skops' model loader): these two 6 MB together. All are imported in try/except ImportError blocks, which
# take the "not installed" branch when the module is marked absent.
UNUSED_OPTIONAL_MODULES = ("jax", "h5py", "tensorboard", "pytest")
_NO_TENSORBOARD_NOTE = "due to missing TensorBoard"


def _without_unused_optional_modules() -> None:
    for name in UNUSED_OPTIONAL_MODULES:
        sys.modules.setdefault(name, None)  # type: ignore[arg-type]
    # TF says it once per API module when TensorBoard is missing; the server writes no summaries.
    # (TF logs it through the root logger.)
    logging.getLogger().addFilter(lambda record: _NO_TENSORBOARD_NOTE not in record.getMessage())


# Memory the C allocator keeps after it was freed (model loading, parsing the domain, per-turn garbage) is given back
# to the system: once when the server starts serving and then every TRIM_INTERVAL_S (malloc_trim takes about 0.3 ms).
# The objects alive at that moment (Rasa, TensorFlow, the model: about 450,000) are frozen out of the garbage
# collector's full passes, each of which walked all of them (240 ms) for nothing. With TensorBoard and pytest left
# out: 6.5 MB less of the process's own memory (RssAnon) after 500 turns (issue 10).
TRIM_INTERVAL_S = 30.0


def _release_free_memory() -> None:
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to give back this way
        pass


def _settle_memory(app: Any, loop: Any) -> None:
    from bot.assistant import patches
    from bot.assistant.patches import in_process_actions

    try:  # loaded now, it is frozen with the start-up objects and the first customer does not wait for it
        if patches.INSTALLED:
            in_process_actions.warm_up()
    except Exception:  # noqa: BLE001 - the first validation loads it again and answers as an action server's 500
        logging.getLogger(__name__).exception("The in-process validation actions could not be loaded")
    gc.collect()
    gc.freeze()
    _release_free_memory()
    logging.getLogger(__name__).info("Memory settled: %d objects frozen, free memory given back",
                                     gc.get_freeze_count())

    def trim_again() -> None:
        _release_free_memory()
        loop.call_later(TRIM_INTERVAL_S, trim_again)

    loop.call_later(TRIM_INTERVAL_S, trim_again)


def _patch_rasa_run() -> None:
    """Settle the memory of every app `rasa run` configures (with or without the HTTP API) once it serves."""
    from rasa.core import run

    _extend_app_factory(run, "configure_app", "_settles_memory",
                        lambda app: app.register_listener(_settle_memory, "after_server_start"))
    _extend_app_factory(run, "configure_app", "_masks_handlers",
                        lambda app: app.register_listener(_mask_log_handlers, "after_server_start"))


def _mask_log_handlers(app: Any, loop: Any) -> None:
    """The masking filter on the handlers `rasa run` has configured by now (its log file among them), and warnings
    through logging again in case a library reset warnings.showwarning (bot/privacy/logs.py)."""
    from bot.privacy.logs import capture_warnings, mask_handlers

    capture_warnings()
    mask_handlers()


def main(argv: Optional[List[str]] = None) -> None:
    os.environ.setdefault("SANIC_REQUEST_MAX_SIZE", str(DEFAULT_MAX_BODY))
    _without_unused_optional_modules()
    private_umask()
    from bot.privacy import install_log_redaction

    install_log_redaction()
    _patch_rasa_app()
    _patch_rasa_run()
    from rasa.__main__ import main as rasa_main

    # Rasa reads sys.argv; /proc/<pid>/cmdline keeps what the process was started with, so the token stays out.
    sys.argv = [sys.argv[0]] + build_argv(sys.argv[1:] if argv is None else argv)
    rasa_main()


if __name__ == "__main__":
    main()
