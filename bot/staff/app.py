"""Token-protected staff web page: ticket list with filters, ticket detail, status, notes and replies.

    STAFF_TOKEN=... python -m bot.staff --port 8081

Sign-in exchanges the token for a session of its own (security review finding 15): a random id in an HttpOnly,
SameSite=Strict cookie (Secure when the page is served over HTTPS), valid STAFF_SESSION_HOURS (default 12) and
revoked at sign-out; the token itself never sits in the browser. The name typed at sign-in belongs to the session
and signs notes and replies. Wrong tokens are limited per address (LOGIN_FAILURES_PER_MINUTE, then 429). Scripts may
send `Authorization: Bearer <token>` instead. Every form carries the session's own CSRF value. Pages may be framed
only by ADVISOR_FRAME_ANCESTORS (default 'self'). Labels come from knowledge/handoff.yml in en, fa and tr (?ui=fa).
"""
from __future__ import annotations

import asyncio
import hmac
import html
import logging
import os
import secrets
import time
import urllib.parse
from collections import deque
from dataclasses import dataclass, field
from datetime import timezone
from typing import Any, Deque, Dict, List, Optional

from aiohttp import web

from bot.origins import frame_ancestors
from bot.privacy import mask_pii, mask_sender_id
from bot.staff import service
from bot.staff.rasa_api import RasaClient, RasaUnavailable
from bot.tickets.models import CATEGORIES, STATUSES, Ticket, normalize_ticket_id
from bot.tickets.store import UNAVAILABLE, StoreUnavailable, TicketNotFound, TicketStore
from bot.tickets.texts import (STAFF_LANGS, reason_label, staff_cards, staff_estimate_lines, staff_labels,
                              staff_value_lines)

logger = logging.getLogger(__name__)

SESSION_COOKIE = "staff_session"
UI_COOKIE = "staff_ui"
LOGIN_FAILURES_PER_MINUTE = int(os.environ.get("STAFF_LOGIN_FAILURES_PER_MINUTE", "5"))


@dataclass
class StaffSession:
    name: str
    csrf: str
    expires: float


@dataclass
class Sessions:
    """Signed-in browsers: one random id per sign-in, each with its own CSRF value, until expiry or sign-out."""
    ttl_s: float
    by_id: Dict[str, StaffSession] = field(default_factory=dict)

    def create(self, name: str) -> str:
        self._forget_expired()
        session_id = secrets.token_urlsafe(32)
        self.by_id[session_id] = StaffSession(name=name, csrf=secrets.token_urlsafe(24),
                                              expires=time.time() + self.ttl_s)
        return session_id

    def get(self, session_id: str) -> Optional[StaffSession]:
        session = self.by_id.get(session_id) if session_id else None
        if session and session.expires < time.time():
            self.by_id.pop(session_id, None)
            return None
        return session

    def revoke(self, session_id: str) -> None:
        self.by_id.pop(session_id, None)

    def _forget_expired(self) -> None:
        now = time.time()
        for key in [k for k, v in self.by_id.items() if v.expires < now]:
            del self.by_id[key]


@dataclass
class LoginLimiter:
    """Wrong tokens per client address in the last minute; more than `limit` and sign-in answers 429 for a while.

    An attempt is counted from the moment it starts (`begin`), not when its answer is known: the check and the
    record were separated by reading the form and the half-second pause, so parallel guesses all passed the check
    before the first failure was recorded (issue 20, finding 7). The event loop runs `begin` without a pause, so
    at most `limit` attempts per address are ever checked within a minute.
    """
    limit: int
    failures: Dict[str, Deque[float]] = field(default_factory=dict)
    in_flight: Dict[str, int] = field(default_factory=dict)

    def _recent(self, address: str) -> int:
        recent = self.failures.get(address)
        now = time.time()
        while recent and recent[0] < now - 60:
            recent.popleft()
        if recent is not None and not recent:
            del self.failures[address]
        return len(recent or ())

    def blocked(self, address: str) -> bool:
        return self._recent(address) + self.in_flight.get(address, 0) >= self.limit

    def begin(self, address: str) -> bool:
        """Reserve an attempt for `address`; False (nothing reserved) when it may not try now."""
        if self.blocked(address):
            return False
        self.in_flight[address] = self.in_flight.get(address, 0) + 1
        return True

    def end(self, address: str, failed: bool) -> None:
        left = self.in_flight.get(address, 1) - 1
        if left:
            self.in_flight[address] = left
        else:
            self.in_flight.pop(address, None)
        if failed:
            self.failed(address)

    def failed(self, address: str) -> None:
        self.failures.setdefault(address, deque()).append(time.time())


STORE_KEY = web.AppKey("store", TicketStore)
RASA_KEY = web.AppKey("rasa", RasaClient)
TOKEN_KEY = web.AppKey("token", str)
SESSIONS_KEY = web.AppKey("sessions", Sessions)
LIMITER_KEY = web.AppKey("limiter", LoginLimiter)


def _same_secret(given: str, token: str) -> bool:
    """Constant-time comparison that also takes non-ASCII input (hmac.compare_digest refuses non-ASCII str: 500)."""
    return hmac.compare_digest(given.encode("utf-8", "surrogateescape"), token.encode())


def _session(request: web.Request) -> Optional[StaffSession]:
    return request.app[SESSIONS_KEY].get(request.cookies.get(SESSION_COOKIE, ""))


def _bearer_ok(request: web.Request) -> bool:
    bearer = request.headers.get("Authorization", "")
    return bearer.startswith("Bearer ") and _same_secret(bearer[7:].strip(), request.app[TOKEN_KEY])


def _authorized(request: web.Request) -> bool:
    return _bearer_ok(request) or _session(request) is not None


def _ui(request: web.Request) -> str:
    lang = request.query.get("ui") or request.cookies.get(UI_COOKIE) or os.environ.get("STAFF_LANG", "en")
    return lang if lang in STAFF_LANGS else "en"


def _author(request: web.Request) -> str:
    session = _session(request)
    return ((session.name if session else "") or "staff")[:64]


def e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


STYLE = """
body{font-family:system-ui,sans-serif;margin:0;background:#f5f6f8;color:#1d2330}
header{background:#1d2330;color:#fff;padding:.6rem 1rem;display:flex;gap:1rem;align-items:center}
header a{color:#cfe0ff} header .grow{flex:1}
main{padding:1rem;max-width:1100px;margin:auto}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{padding:.4rem .5rem;border-bottom:1px solid #e3e6ea;text-align:start;vertical-align:top}
.p1{color:#b00020;font-weight:700}.p2{color:#c25e00;font-weight:600}
.card{background:#fff;border:1px solid #e3e6ea;border-radius:6px;padding:.8rem 1rem;margin:.8rem 0}
.msg{padding:.3rem .5rem;margin:.2rem 0;border-radius:4px;unicode-bidi:plaintext;white-space:pre-wrap}
.msg.user{background:#eef4ff}.msg.bot{background:#f1f1f1}.msg.staff{background:#e9f7ef}
.flash{padding:.5rem 1rem;border-radius:4px;margin:.5rem 0}.flash.ok{background:#e9f7ef}.flash.err{background:#fdecea}
textarea{width:100%;min-height:4rem} form.inline{display:inline}
dl{display:grid;grid-template-columns:max-content auto;gap:.2rem 1rem} dt{font-weight:600}
.tag{display:inline-block;background:#eef;border-radius:3px;padding:0 .3rem;margin:0 .1rem}
.ltr{direction:ltr;unicode-bidi:isolate}
"""


def page(request: web.Request, title: str, body: str, status: int = 200) -> web.Response:
    ui = _ui(request)
    L = staff_labels(ui)
    switch = " ".join(f'<a href="?ui={lang}">{lang}</a>' for lang in STAFF_LANGS)
    signed_in = _authorized(request)
    nav = (f'<a href="/">{e(L["tickets"])}</a><span class="grow"></span>{switch} '
           + (f'<a href="/logout">{e(L["sign_out"])}</a>' if signed_in else ""))
    doc = (f'<!doctype html><html lang="{ui}" dir="{L["dir"]}"><head><meta charset="utf-8">'
           f'<meta name="viewport" content="width=device-width,initial-scale=1"><title>{e(title)}</title>'
           f'<style>{STYLE}</style></head><body><header><strong>{e(L["title"])}</strong>{nav}</header>'
           f'<main>{body}</main></body></html>')
    resp = web.Response(text=doc, content_type="text/html", status=status)
    if request.query.get("ui") in STAFF_LANGS:
        resp.set_cookie(UI_COOKIE, request.query["ui"], httponly=True, samesite="Strict")
    resp.headers["Cache-Control"] = "no-store"
    resp.headers["Content-Security-Policy"] = (f"default-src 'self'; style-src 'unsafe-inline'; img-src 'self'; "
                                               f"frame-ancestors {frame_ancestors()}")
    return resp


def _flash(request: web.Request) -> str:
    L = staff_labels(_ui(request))
    keys = [k for k in request.query.get("msg", "").split(",") if k in L and isinstance(L[k], str)]
    ok = request.query.get("ok", "1") == "1"
    return "".join(f'<div class="flash {"ok" if ok else "err"}" role="status">{e(L[k])}</div>' for k in keys)


def _csrf_field(request: web.Request) -> str:
    session = _session(request)
    return f'<input type="hidden" name="csrf" value="{e(session.csrf if session else "")}">'


@web.middleware
async def auth_middleware(request: web.Request, handler):
    if request.path in ("/login", "/healthz", "/health"):
        return await handler(request)
    if not _authorized(request):
        if request.path.startswith("/api/"):
            return web.json_response({"error": "unauthorized"}, status=401)
        raise web.HTTPFound("/login")
    if request.method == "POST" and not _bearer_ok(request):
        form = await request.post()
        session = _session(request)
        if session is None or not _same_secret(str(form.get("csrf", "")), session.csrf):
            return web.Response(status=403, text="CSRF check failed")
    return await handler(request)


# ---------------------------------------------------------------- sign-in

async def login_form(request: web.Request) -> web.Response:
    L = staff_labels(_ui(request))
    error = f'<div class="flash err" role="alert">{e(L["bad_token"])}</div>' if request.query.get("bad") else ""
    body = (f'<div class="card"><h1>{e(L["login_title"])}</h1>{error}<form method="post" action="/login">'
            f'<p><label>{e(L["token"])}<br><input type="password" name="token" id="token" required></label></p>'
            f'<p><label>{e(L["your_name"])}<br><input name="name" id="name" maxlength="64"></label></p>'
            f'<button type="submit" id="sign-in">{e(L["sign_in"])}</button></form></div>')
    return page(request, L["login_title"], body, status=401 if request.query.get("bad") else 200)


def _served_over_https(request: web.Request) -> bool:
    # Behind a TLS-terminating proxy the request arrives as plain HTTP; trust its header only when told to.
    forwarded = request.headers.get("X-Forwarded-Proto", "") if os.environ.get("STAFF_TRUST_PROXY") == "1" else ""
    return request.secure or forwarded.lower() == "https"


async def login(request: web.Request) -> web.Response:
    address = request.remote or "?"
    limiter = request.app[LIMITER_KEY]
    if not limiter.begin(address):
        return web.Response(status=429, text="Too many wrong tokens; try again in a minute.",
                            headers={"Retry-After": "60"})
    failed = True
    try:
        form = await request.post()
        failed = not _same_secret(str(form.get("token", "")), request.app[TOKEN_KEY])
        if failed:
            await asyncio.sleep(0.5)  # slows down guessing from one client; the limiter bounds parallel guesses
            raise web.HTTPFound("/login?bad=1")
    finally:
        limiter.end(address, failed)
    name = str(form.get("name", "")).strip()[:64]
    session_id = request.app[SESSIONS_KEY].create(name)
    resp = web.HTTPFound("/")
    resp.set_cookie(SESSION_COOKIE, session_id, httponly=True, samesite="Strict",
                    max_age=int(request.app[SESSIONS_KEY].ttl_s), secure=_served_over_https(request))
    raise resp


async def logout(request: web.Request) -> web.Response:
    request.app[SESSIONS_KEY].revoke(request.cookies.get(SESSION_COOKIE, ""))
    resp = web.HTTPFound("/login")
    resp.del_cookie(SESSION_COOKIE)
    raise resp


async def healthz(request: web.Request) -> web.Response:
    return web.json_response({"ok": True})


# ---------------------------------------------------------------- list

def _select(name: str, values: List[str], current: Optional[str], names: Dict[str, str], all_label: str) -> str:
    options = [f'<option value="">{e(all_label)}</option>'] + [
        f'<option value="{e(v)}"{" selected" if v == current else ""}>{e(names.get(v, v))}</option>' for v in values]
    return f'<select name="{name}" id="filter-{name}">{"".join(options)}</select>'


async def ticket_list(request: web.Request) -> web.Response:
    L = staff_labels(_ui(request))
    q = request.query
    status, lang, category = q.get("status") or None, q.get("lang") or None, q.get("category") or None
    store = request.app[STORE_KEY]
    warning = ""
    try:
        tickets = await asyncio.to_thread(store.list, status, lang, category)
    except (StoreUnavailable, *UNAVAILABLE):
        tickets, warning = [], f'<div class="flash err" role="alert">{e(L["db_down"])}</div>'
    filters = (f'<form method="get" action="/" class="card">'
               f'{e(L["status"])} {_select("status", list(STATUSES), status, L["statuses"], L["all"])} '
               f'{e(L["language"])} {_select("lang", ["fa", "tr"], lang, L["languages"], L["all"])} '
               f'{e(L["category"])} {_select("category", list(CATEGORIES), category, L["categories"], L["all"])} '
               f'<button type="submit" id="apply-filter">{e(L["filter"])}</button></form>')
    head = "".join(f"<th>{e(L[k])}</th>" for k in ("id", "priority", "status", "language", "category", "channel",
                                                   "created", "contact"))
    rows = "".join(
        f'<tr class="ticket-row" data-id="{e(t.id)}"><td><a href="/tickets/{e(t.id)}">{e(t.id)}</a></td>'
        f'<td class="p{t.priority}">{e(L["priorities"][t.priority])}</td><td>{e(L["statuses"][t.status])}</td>'
        f'<td>{e(L["languages"].get(t.language, t.language))}</td><td>{e(L["categories"][t.category])}</td>'
        f'<td>{e(t.channel)}</td><td class="ltr">{t.created_at:%Y-%m-%d %H:%M}</td>'
        f'<td class="ltr">{e(t.contact or "—")}</td></tr>' for t in tickets)
    table = (f'<table id="tickets"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>' if tickets
             else f'<p id="no-tickets">{e(L["no_tickets"])}</p>')
    return page(request, L["tickets"], f"<h1>{e(L['tickets'])}</h1>{_flash(request)}{warning}{filters}{table}")


# ---------------------------------------------------------------- detail

def _live_messages(rasa: RasaClient, ticket: Ticket) -> List[Dict[str, str]]:
    """Messages exchanged after the ticket was opened, read back from Rasa (the tracker store masks them too)."""
    try:
        tracker = rasa.tracker(ticket.sender_id)
    except RasaUnavailable:
        return []
    since = ticket.created_at.replace(tzinfo=timezone.utc).timestamp()
    out = []
    for ev in tracker.get("events", []):
        if ev.get("event") in ("user", "bot") and ev.get("text") and ev.get("timestamp", 0) >= since:
            # Staff replies are bot events; a user event claiming metadata.staff is the customer's (finding 4).
            role = "staff" if ev["event"] == "bot" and (ev.get("metadata") or {}).get("staff") else ev["event"]
            out.append({"role": role, "text": mask_pii(ev["text"])})
    return out


def _rows_html(rows) -> str:
    """(label, value) rows as staff read them (bot.tickets.texts: "5000 dolar", "8 × B200, ZeRO-3, ...")."""
    return "".join(f'<dt>{e(label)}</dt><dd>{e(value)}</dd>' for label, value in rows)


def _messages_html(messages, L) -> str:
    return "".join(f'<div class="msg {e(m["role"])}"><strong>{e(L["roles"][m["role"]])}:</strong> {e(m["text"])}</div>'
                   for m in messages)


async def ticket_detail(request: web.Request) -> web.Response:
    L = staff_labels(_ui(request))
    ui = _ui(request)
    tid = normalize_ticket_id(request.match_info["id"])
    store, rasa = request.app[STORE_KEY], request.app[RASA_KEY]
    try:
        t = await asyncio.to_thread(store.get, tid)
    except TicketNotFound:
        return page(request, L["not_found"], f'<p class="flash err">{e(L["not_found"])}</p>', status=404)
    except StoreUnavailable:
        return page(request, L["db_down"], f'<p class="flash err">{e(L["db_down"])}</p>', status=503)
    live = await asyncio.to_thread(_live_messages, rasa, t)
    csrf = _csrf_field(request)
    reasons = "".join(f'<span class="tag">{e(reason_label(r, ui))}</span>' for r in t.priority_reasons)
    contact = (f'<span class="ltr">{e(t.contact)}</span> <span class="tag">{e(t.contact_kind)}</span>' if t.contact
               else e(L["anonymous"]))
    meta = "".join(f"<dt>{e(L[k])}</dt><dd>{v}</dd>" for k, v in (
        ("status", f'<span id="status">{e(L["statuses"][t.status])}</span>'
                   + (f' <span class="tag">{e(L["spooled"])}</span>' if t.spooled else "")),
        ("priority", f'<span class="p{t.priority}">{e(L["priorities"][t.priority])}</span> {reasons}'),
        ("category", e(L["categories"][t.category])),
        ("language", e(L["languages"].get(t.language, t.language))),
        ("channel", e(t.channel)), ("sender", f"<code>{e(mask_sender_id(t.sender_id))}</code>"),
        ("created", f'<span class="ltr">{t.created_at:%Y-%m-%d %H:%M} UTC</span>'),
        ("updated", f'<span class="ltr">{t.updated_at:%Y-%m-%d %H:%M} UTC</span>'),
        ("contact", f'<span id="contact">{contact}</span>')))
    slots = _rows_html(staff_value_lines(t.slots, ui))
    estimate = _rows_html(staff_estimate_lines(t.estimate_summary, ui))
    cards = " ".join(f'<span class="tag">{e(c)}</span>' for c in staff_cards(t.cards, t.estimate_summary, ui))
    notes = "".join(f'<li class="note {e(n.kind)}">{n.at:%Y-%m-%d %H:%M} <strong>{e(n.author)}</strong> '
                    f'[{e(L["note_kinds"][n.kind])}] <span class="text">{e(n.text)}</span></li>' for n in t.notes)
    status_opts = "".join(f'<option value="{s}"{" selected" if s == t.status else ""}>{e(L["statuses"][s])}</option>'
                          for s in STATUSES)
    base = f"/tickets/{e(t.id)}"
    take = (f'<form method="post" action="{base}/status" class="card">{csrf}'
            f'<input type="hidden" name="status" value="in_progress">'
            f'<button type="submit" id="take">{e(L["take"])}</button></form>' if t.status == "open" else "")
    body = f"""
<p><a href="/">&larr; {e(L['back'])}</a></p>{_flash(request)}
<h1 id="ticket-id">{e(t.id)}</h1>
<div class="card"><dl>{meta}</dl></div>
<div class="card"><h2>{e(L['gathered'])}</h2><dl id="slots">{slots or '—'}</dl>
<h2>{e(L['estimate'])}</h2><dl id="estimate">{estimate or '—'}</dl>
<p id="cards">{e(L['cards'])}: {cards or '—'}</p></div>
<div class="card" id="excerpt"><h2>{e(L['excerpt'])}</h2>{_messages_html([m.dict() for m in t.excerpt], L) or '—'}</div>
{f'<div class="card" id="live"><h2>{e(L["live"])}</h2>{_messages_html(live, L)}</div>' if live else ''}
<div class="card"><h2>{e(L['reply'])}</h2>
<form method="post" action="{base}/reply">{csrf}<textarea name="text" id="reply-text"
 placeholder="{e(L['reply_placeholder'])}" dir="auto"></textarea>
<button type="submit" id="send-reply">{e(L['send_reply'])}</button></form></div>
{take}<div class="card"><h2>{e(L['change_status'])}</h2>
<form method="post" action="{base}/status">{csrf}<select name="status" id="status-select">{status_opts}</select>
<input name="note" id="status-note" placeholder="{e(L['note_placeholder'])}">
<button type="submit" id="save-status">{e(L['save'])}</button></form></div>
<div class="card"><h2>{e(L['notes'])}</h2><ul id="notes">{notes}</ul>
<form method="post" action="{base}/note">{csrf}<textarea name="text" id="note-text"
 placeholder="{e(L['note_placeholder'])}" dir="auto"></textarea>
<button type="submit" id="add-note">{e(L['add_note'])}</button></form></div>"""
    return page(request, t.id, body)


def _back(tid: str, outcome: service.Outcome) -> web.HTTPFound:
    query = urllib.parse.urlencode({"msg": ",".join(outcome.messages), "ok": "1" if outcome.ok else "0"})
    return web.HTTPFound(f"/tickets/{urllib.parse.quote(tid)}?{query}")


async def _act(request: web.Request, fn) -> web.Response:
    tid = normalize_ticket_id(request.match_info["id"])
    form = await request.post()
    try:
        outcome = await asyncio.to_thread(fn, request.app[STORE_KEY], request.app[RASA_KEY], tid, form,
                                          _author(request))
    except TicketNotFound:
        raise web.HTTPNotFound(text="no such ticket")
    except (StoreUnavailable, *UNAVAILABLE):
        raise web.HTTPFound(f"/tickets/{urllib.parse.quote(tid)}?msg=db_down&ok=0")
    except ValueError:
        raise web.HTTPFound(f"/tickets/{urllib.parse.quote(tid)}?msg=empty_text&ok=0")
    raise _back(tid, outcome)


async def post_reply(request: web.Request) -> web.Response:
    return await _act(request, lambda s, r, tid, f, a: service.reply(s, r, tid, str(f.get("text", "")), a))


async def post_status(request: web.Request) -> web.Response:
    def change(s, r, tid, f, a):
        status = str(f.get("status", ""))
        if status not in STATUSES:
            raise ValueError(status)
        return service.set_status(s, r, tid, status, a, str(f.get("note", "")).strip() or None)

    return await _act(request, change)


async def post_note(request: web.Request) -> web.Response:
    def note(s, r, tid, f, a):
        return service.Outcome(s.add_note(tid, str(f.get("text", "")), author=a), ["note_added"])

    return await _act(request, note)


async def api_tickets(request: web.Request) -> web.Response:
    q = request.query
    tickets = await asyncio.to_thread(request.app[STORE_KEY].list, q.get("status"), q.get("lang"), q.get("category"))
    return web.json_response([t.to_json_dict() for t in tickets])


# ---------------------------------------------------------------- app

def create_app(token: Optional[str] = None, store: Optional[TicketStore] = None, rasa: Optional[RasaClient] = None,
               flush_interval_s: float = 30.0) -> web.Application:
    token = token if token is not None else os.environ.get("STAFF_TOKEN", "")
    if len(token) < 8:
        raise SystemExit("STAFF_TOKEN must be set to a secret of at least 8 characters")
    app = web.Application(middlewares=[auth_middleware])
    app[TOKEN_KEY] = token
    app[SESSIONS_KEY] = Sessions(ttl_s=float(os.environ.get("STAFF_SESSION_HOURS", "12")) * 3600)
    app[LIMITER_KEY] = LoginLimiter(LOGIN_FAILURES_PER_MINUTE)
    app[STORE_KEY] = store or TicketStore()
    app[RASA_KEY] = rasa or RasaClient()

    async def start_flusher(app: web.Application) -> None:
        stop = app[STORE_KEY].start_periodic_flush(flush_interval_s)
        app.on_cleanup.append(lambda _app: _stop(stop))

    async def _stop(stop) -> None:
        stop.set()

    app.on_startup.append(start_flusher)
    app.add_routes([
        web.get("/login", login_form), web.post("/login", login), web.get("/logout", logout),
        web.get("/healthz", healthz), web.get("/health", healthz),
        web.get("/", ticket_list), web.get("/api/tickets", api_tickets),
        web.get("/tickets/{id}", ticket_detail), web.post("/tickets/{id}/reply", post_reply),
        web.post("/tickets/{id}/status", post_status), web.post("/tickets/{id}/note", post_note),
    ])
    return app
