"""Which web origins may talk to the assistant from a browser, and which sites may frame our pages.

    ADVISOR_ALLOWED_ORIGINS   comma-separated origins allowed to use Rasa's HTTP API and socket.io from a browser
                              (CORS and the socket.io Origin check), e.g. "https://www.cloudrux.com,https://cloudrux.com".
                              Default: the website's own origin (ADVISOR_PUBLIC_URL, http://localhost:8080), and for a
                              localhost website also its 127.0.0.1 twin.
    ADVISOR_FRAME_ANCESTORS   the CSP frame-ancestors of the chat page and the staff page (default 'self'); e.g.
                              "'self' https://www.cloudrux.com" to let the company site frame the chat page.

No rasa import: the website and the staff page use it too.
"""
from __future__ import annotations

import os
import re
import urllib.parse
from typing import List

DEFAULT_PUBLIC_URL = "http://localhost:8080"
_FRAME_SOURCE = re.compile(r"^(?:'self'|'none'|https?://[A-Za-z0-9.-]+(?::\d+)?|\*\.[A-Za-z0-9.-]+)$")


def origin_of(url: str) -> str:
    parts = urllib.parse.urlsplit(url.strip())
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else ""


def allowed_origins() -> List[str]:
    configured = [origin_of(o) or o.strip() for o in os.environ.get("ADVISOR_ALLOWED_ORIGINS", "").split(",")]
    configured = [o for o in configured if o and o != "*"]  # "*" is never honoured: list the sites
    if configured:
        return configured
    own = origin_of(os.environ.get("ADVISOR_PUBLIC_URL") or DEFAULT_PUBLIC_URL) or DEFAULT_PUBLIC_URL
    twins = [own]
    if "//localhost" in own:
        twins.append(own.replace("//localhost", "//127.0.0.1"))
    elif "//127.0.0.1" in own:
        twins.append(own.replace("//127.0.0.1", "//localhost"))
    return twins


def frame_ancestors() -> str:
    """CSP frame-ancestors sources; anything that is not a plain origin, 'self' or 'none' is dropped."""
    sources = [s for s in os.environ.get("ADVISOR_FRAME_ANCESTORS", "'self'").split() if _FRAME_SOURCE.match(s)]
    return " ".join(sources) or "'self'"
