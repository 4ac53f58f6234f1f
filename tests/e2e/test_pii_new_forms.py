"""Issue 20 findings 2, 3, 5 and 7 against the real servers (action server, Rasa with the redacting tracker store on
SQLite, the ticket store, the staff page): personal data written in the forms that leaked stays masked everywhere a
hand-over conversation is kept, a refusal that carries a number is no consent, "/..." messages and REST sender ids
reach no log in clear, numbers kept as slot values are masked.

The values are generated here with valid check digits (seeded); the sentences were written for this test.
"""
from __future__ import annotations

import asyncio
import json
import random
import re
import sqlite3
import time
import uuid
from typing import Dict, Iterable, List

import pytest
from aiohttp.test_utils import TestClient, TestServer
from stdnum import iban as stdnum_iban
from stdnum import luhn
from stdnum.tr import tckimlik

from bot.privacy.normalize import digits_only
from bot.staff.app import create_app
from bot.staff.rasa_api import RasaClient
from bot.tickets.store import TicketStore
from tests.conftest import Conversation
from tests.e2e.helpers import domain_response
from tests.servers import LOG_DIR, start_action_server, start_rasa_server

pytestmark = pytest.mark.e2e

RNG = random.Random(20261203)
ANY_MASK = re.compile(r"\[(?:PHONE|EMAIL|TC_KIMLIK|IR_NATIONAL_ID|IBAN|CARD|ADDRESS)\]")
TICKET_ID = re.compile(r"T-\d{6}-[0-9A-HJKMNP-TV-Z]{6}")
STAFF_TOKEN = "staff-token-pii-20"
PERSIAN = str.maketrans("0123456789", "۰۱۲۳۴۵۶۷۸۹")
ARABIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")
MATH = str.maketrans("0123456789", "".join(chr(0x1D7CE + i) for i in range(10)))
SUPER = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def _d(n: int) -> str:
    return "".join(RNG.choice("0123456789") for _ in range(n))


def _tc() -> str:
    body = RNG.choice("123456789") + _d(8)
    return body + tckimlik.calc_check_digits(body)


def _nid() -> str:
    body = _d(9)
    r = sum(int(body[i]) * (10 - i) for i in range(9)) % 11
    return body + str(r if r < 2 else 11 - r)


def _card() -> str:
    body = "4" + _d(14)
    return body + luhn.calc_check_digit(body)


def _iban() -> str:
    bban = _d(22)
    return "TR" + stdnum_iban.calc_check_digits("TR00" + bban) + bban


TR_MOBILE = ["5" + RNG.choice("0345") + _d(8) for _ in range(8)]
IR_MOBILE = ["9" + RNG.choice("0123") + _d(8) for _ in range(8)]
TC = [_tc() for _ in range(4)]
NID = [_nid() for _ in range(4)]
CARD = [_card() for _ in range(3)]
IBAN = [_iban() for _ in range(3)]


def _g(value: str, sizes: List[int], sep: str) -> str:
    out, i = [], 0
    for n in sizes:
        out.append(value[i:i + n])
        i += n
    return sep.join(out + ([value[i:]] if i < len(value) else []))


# (message, values that must never be readable, as digit strings or e-mail local parts)
TR_MESSAGES = [
    (f"cep numaram 0{_g(TR_MOBILE[0], [3, 3, 2, 2], chr(10))}, akşam arayabilirsiniz", ["0" + TR_MOBILE[0]]),
    (f"telefon: 0{_g(TR_MOBILE[1], [3, 3, 4], '_')} (iş)", ["0" + TR_MOBILE[1]]),
    (f"whatsapp tel:%2B90%20{TR_MOBILE[2][:3]}%20{TR_MOBILE[2][3:]}", ["90" + TR_MOBILE[2]]),
    (f"sabit hat 0212 {_d(3)} {_d(2)} {_d(2)}x{_d(3)} dahili", []),
    (f"kimliğim {_g(TC[0], [3, 3, 3, 2], '--')} ve TC{TC[1]}kayıtlı", [TC[0], TC[1]]),
    (f"IBAN {_g(IBAN[0][2:], [4] * 6, '  ')} (TR yazmadım)", [IBAN[0][2:]]),
    (f"kart {_g(CARD[0], [4] * 4, ' ').translate(MATH)} son kullanma 11/28", [CARD[0]]),
    (f"numaram {('0' + TR_MOBILE[3]).translate(SUPER)} ve {_g('0' + TR_MOBILE[4], [4, 3, 2, 2], '・')}",
     ["0" + TR_MOBILE[3], "0" + TR_MOBILE[4]]),
    ("e-posta: deniz.ozkan [at] ornekfirma [dot] com.tr ya da DENIZ.OZKAN@ORNEKFIRMA.COM", ["deniz.ozkan"]),
    ("adresim Fenerbahçe Mah. Kalamış Cad. No:41/7 Daire 12 Kadıköy/İstanbul, fatura oraya", ["41/7"]),
    (f"{TC[2]}0{TR_MOBILE[5]} (kimlik ve telefon bitişik yazıldı)", [TC[2], "0" + TR_MOBILE[5]]),
    ("llama 3.1 8b qlora 2048 token, bütçe 60 dolar, 12.000 örnek", []),
]
FA_MESSAGES = [
    (f"موبایلم {('0' + IR_MOBILE[0]).translate(PERSIAN)[:4]}\u2028{('0' + IR_MOBILE[0]).translate(PERSIAN)[4:]} است",
     ["0" + IR_MOBILE[0]]),
    (f"شماره‌ام {_g('0' + IR_MOBILE[1], [4, 3, 4], '،').translate(ARABIC)} هست", ["0" + IR_MOBILE[1]]),
    (f"کد ملی {_g(NID[0], [3, 6, 1], '٬').translate(PERSIAN)} و کد ملی همسرم {NID[1]}", [NID[0], NID[1]]),
    (f"viber://chat?number=%2B98{IR_MOBILE[2]} یا {_g('0' + IR_MOBILE[3], [4, 3, 4], '     ')}",
     ["98" + IR_MOBILE[2], "0" + IR_MOBILE[3]]),
    (f"شبا {_g(IBAN[1][2:], [4] * 6, ' ').translate(PERSIAN)} بدون IR", [IBAN[1][2:]]),
    (f"کارت {_g(CARD[1], [4] * 4, '-').translate(PERSIAN)}", [CARD[1]]),
    ("ایمیلم reza.karimi (at) example (dot) ir است", ["reza.karimi"]),
    ("آدرس: تهران، خیابان شریعتی، کوچه لاله، پلاک ۲۷، واحد ۵، کد پستی ۱۵۴۸۷۶۳۹۱۲", ["1548763912"]),
    (f"کد{NID[2]}شماره{('0' + IR_MOBILE[4]).translate(PERSIAN)}", [NID[2], "0" + IR_MOBILE[4]]),
    ("مدل لاما ۳.۱ ۸ میلیارد با کیولورا، ۲۰۴۸ توکن، بودجه ۶۰ دلار", []),
]
ASK_HUMAN = {"tr": "bir müşteri temsilcisiyle görüşmek istiyorum", "fa": "می‌خواهم با یک کارشناس صحبت کنم"}
SAY_NO = {"tr": "hayır", "fa": "نه"}
# Issue 21, round 4: a refusal opens no ticket by itself; a request without a contact is offered, "yes" opens it.
SAY_YES = {"tr": "evet", "fa": "بله"}


def refuse_then_accept(user, lang: str, refusal: str) -> str:
    """The refusal (which must open nothing and offer a request without a contact), then "yes": the replies."""
    offered = _texts(user.say(refusal))
    assert domain_response("utter_offer_ticket_without_contact", lang) in offered, offered
    assert not TICKET_ID.search(offered), offered
    return offered + "\n" + _texts(user.say(SAY_YES[lang]))


def _texts(replies: List[dict]) -> str:
    return "\n".join(r.get("text", "") for r in replies if r.get("text"))


def _unescaped(raw: str) -> str:
    return re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), raw)


# Keys whose values are ours, not the customer's: ids, and the stores' timestamps, whose digits ("10:52:25.179")
# could hold six digits of a random test number by chance (a flaky false positive seen on 2026-12-03).
def _strings(value, skip=("message_id", "sender_id", "timestamp", "id", "created_at", "updated_at", "at")
             ) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            if k not in skip:
                yield from _strings(v, skip)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v, skip)
    elif isinstance(value, (int, float)) and not isinstance(value, bool) and float(value).is_integer():
        yield str(int(value))  # a number kept as a number (a slot); not confidences, whose digits are noise


def _between_letters(text: str) -> List[str]:
    """The pieces of `text` between its letters (str.isalpha: "²" and "①" are not letters, they stay in)."""
    pieces, current = [], []
    for ch in text:
        if ch.isalpha():
            pieces.append("".join(current))
            current = []
        else:
            current.append(ch)
    return pieces + ["".join(current)]


LOG_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?")


def in_clear(texts: Iterable[str], secrets: List[str]) -> List[str]:
    """Secrets readable in any of `texts`: six digits in a row of a number (any script, any grouping inside one
    text), or an e-mail local part or address number."""
    found = []
    for text in texts:
        # A log line's own timestamp is not typed digits: "18:32:19,876" once joined into "3219876", six digits of
        # a test phone number 05443219876 (CI, 2026-12-03 18:32).
        text = LOG_TIMESTAMP.sub(" ", _unescaped(text))
        # Digits are read across any grouping a person types (spaces, dashes, dots, line breaks ...) but never across
        # a letter: a log line's "0x7f1b13134550>" next to "'70fe93404…'" once joined into six digits of a test
        # number by chance (CI, 2026-12-03).
        shown = [digits_only(piece) for piece in _between_letters(text)]
        for secret in secrets:
            if secret.isdigit():
                windows = [secret[i:i + 6] for i in range(len(secret) - 5)]
                found += [f"{secret}~{w}" for w in windows if any(w in piece for piece in shown)]
            elif secret in text or secret.lower() in text.lower():
                found.append(secret)
    return found


@pytest.fixture(scope="module")
def stack(rasa_model, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pii20")
    tickets_url = f"sqlite:///{tmp}/tickets.db"
    env = {"TICKETS_DB_URL": tickets_url, "TICKETS_SPOOL_DIR": str(tmp / "spool"), "LOG_LEVEL": "DEBUG"}
    actions = start_action_server(env=env)
    rasa = start_rasa_server(actions.port, env=env)
    try:
        yield {"actions": actions, "rasa": rasa, "tickets_url": tickets_url, "store": TicketStore(tickets_url),
               "client": RasaClient(rasa.url, rasa.extra["auth_token"])}
    finally:
        rasa.stop()
        actions.stop()


def tracker_rows(stack, sender: str) -> List[dict]:
    with sqlite3.connect(stack["rasa"].workdir / "tracker.db") as db:
        return [json.loads(r[0]) for r in db.execute("SELECT data FROM events WHERE sender_id = ?", (sender,))]


def ticket_rows(stack, sender: str) -> List[Dict]:
    path = stack["tickets_url"].replace("sqlite:///", "")
    with sqlite3.connect(path) as db:
        db.row_factory = sqlite3.Row
        rows = [dict(r) for r in db.execute("SELECT * FROM support_tickets WHERE sender_id = ?", (sender,))]
        for row in rows:
            row["notes"] = [dict(n) for n in db.execute("SELECT * FROM support_ticket_notes WHERE ticket_id = ?",
                                                        (row["id"],))]
    return rows


def staff_page(stack, ticket_id: str) -> str:
    async def fetch():
        app = create_app(token=STAFF_TOKEN, store=stack["store"], rasa=stack["client"], flush_interval_s=3600)
        async with TestClient(TestServer(app)) as client:
            response = await client.get(f"/tickets/{ticket_id}?ui=tr",
                                        headers={"Authorization": f"Bearer {STAFF_TOKEN}"})
            assert response.status == 200
            return await response.text()

    return asyncio.run(fetch())


def server_logs(stack) -> Dict[str, str]:
    """Every log file the two servers wrote (stdout and stderr, as var/log/*.log in production)."""
    ports = {stack["rasa"].port, stack["actions"].port}
    return {p.name: _unescaped(p.read_text(errors="replace")) for p in LOG_DIR.glob("*.log")
            if any(p.name.endswith(f"-{port}.log") for port in ports)}


@pytest.mark.parametrize("lang", ["tr", "fa"])
def test_a_handover_without_consent_keeps_none_of_the_new_forms_in_clear(stack, lang):
    messages = TR_MESSAGES if lang == "tr" else FA_MESSAGES
    secrets = [s for _, values in messages for s in values]
    user = Conversation(stack["rasa"], f"pii20-{lang}-{uuid.uuid4().hex[:8]}")
    for text, _ in messages:
        user.say(text)
    user.say(ASK_HUMAN[lang])
    opened = refuse_then_accept(user, lang, SAY_NO[lang])
    ticket_id = TICKET_ID.search(opened).group()
    assert domain_response("utter_ticket_opened_anonymous", lang).split("{")[0].strip() in opened

    rows = tracker_rows(stack, user.sender)
    stored_texts = [e.get("text") or "" for e in rows]
    assert messages[-1][0] in stored_texts, "the job message is kept as written"
    assert in_clear(_strings(rows), secrets) == []
    assert in_clear(_strings(ticket_rows(stack, user.sender)), secrets) == []
    page = staff_page(stack, ticket_id)
    assert ANY_MASK.search(page), "the excerpt on the staff page shows masked values"
    assert in_clear([page], secrets) == []
    api = stack["client"].tracker(user.sender)
    assert in_clear(_strings(api), secrets) == []
    masks = "\n".join(stored_texts)
    for mask in ("[PHONE]", "[EMAIL]", "[IBAN]", "[CARD]", "[ADDRESS]"):
        assert mask in masks, mask
    time.sleep(0.5)
    for name, log in server_logs(stack).items():
        assert in_clear([log], secrets) == [], name


REFUSALS = {
    "tr": [("İletişim bilgisi vermek istemiyorum, {n} numarasından da beni aramayın lütfen.", "0 {a} {b} {c} {d}"),
           ("Hayır teşekkürler; 0{a}{b}{c}{d} kayıtlı olsa da aranmak istemiyorum.", "")],
    "fa": [("نه ممنون، نمی‌خوام اطلاعات تماس بدم؛ به {n} هم زنگ نزنید.", "0{a} {b} {c}{d}"),
           ("اطلاعات تماس نمی‌دم، شماره {n} رو هم ثبت نکنید.", "0{a}-{b}-{c}-{d}")],
}


def _number_for(lang: str, form: str, mobile: str) -> str:
    a, b, c, d = mobile[:3], mobile[3:6], mobile[6:8], mobile[8:]
    written = (form or "0{a}{b}{c}{d}").format(a=a, b=b, c=c, d=d)
    return written.translate(PERSIAN) if lang == "fa" else written


@pytest.mark.parametrize("lang", ["tr", "fa"])
@pytest.mark.parametrize("at", ["consent", "contact"])
@pytest.mark.parametrize("which", [0, 1])
def test_a_refusal_carrying_a_number_is_no_consent(stack, lang, at, which):
    mobile = (TR_MOBILE if lang == "tr" else IR_MOBILE)[6 + which]
    sentence, form = REFUSALS[lang][which]
    number = _number_for(lang, form, mobile)
    text = sentence.format(n=number) if "{n}" in sentence else sentence.replace(
        "0{a}{b}{c}{d}", number)
    user = Conversation(stack["rasa"], f"pii20-refuse-{uuid.uuid4().hex[:8]}")
    user.say("merhaba" if lang == "tr" else "سلام")
    user.say(ASK_HUMAN[lang])
    if at == "contact":
        asked = _texts(user.say("evet" if lang == "tr" else "بله"))
        assert domain_response("utter_ask_handoff_contact", lang).split("(")[0][:20] in asked
    replies = refuse_then_accept(user, lang, text)
    anonymous = domain_response("utter_ticket_opened_anonymous", lang).split("{")[0].strip()
    with_contact = domain_response("utter_ticket_opened", lang).split("{")[0].strip()
    assert anonymous in replies, replies
    promise = domain_response("utter_ticket_opened", lang).split("\n")[1].split("{")[0].strip()
    assert promise not in replies and "[PHONE]" not in replies and with_contact != anonymous
    assert digits_only(number) not in digits_only(replies)
    ticket = stack["store"].get(TICKET_ID.search(replies).group())
    assert ticket.consent is False and ticket.contact is None and ticket.contact_kind is None
    assert in_clear(_strings(ticket_rows(stack, user.sender)), ["0" + mobile]) == []
    assert in_clear(_strings(tracker_rows(stack, user.sender)), ["0" + mobile]) == []


SLASH_MESSAGES = [
    "/0544 321 98 76",
    '/inform{"contact": "selin.aydin@example.org"}',
    "/tc_%(tc)s",
    "/iban %(iban)s",
    "/%(nid_fa)s",
    "/kart %(card)s",
    '/inform{"phone": "+98 %(m)s"}',
]
SLASH_SECRETS_FIXED = ["05443219876", "selin.aydin"]


def test_slash_messages_with_personal_data_reach_no_log_in_clear(stack):
    sender = f"pii20-slash-{uuid.uuid4().hex[:8]}"
    values = {"tc": TC[3], "iban": IBAN[2], "nid_fa": NID[3].translate(PERSIAN), "card": CARD[2],
              "m": f"{IR_MOBILE[7][:3]} {IR_MOBILE[7][3:]}"}
    user = Conversation(stack["rasa"], sender)
    for text in SLASH_MESSAGES:
        user.say(text % values if "%(" in text else text)
    time.sleep(1.0)
    secrets = SLASH_SECRETS_FIXED + [TC[3], IBAN[2][2:], NID[3], CARD[2], IR_MOBILE[7]]
    logs = server_logs(stack)
    assert logs, "the servers wrote log files"
    rasa_log = next(log for name, log in logs.items() if name.startswith("rasa-"))
    # The "/" messages were reported (Rasa warns about unknown intents and entities) and masked on the way.
    assert "[TC_KIMLIK]" in rasa_log and "[PHONE]" in rasa_log
    for name, log in logs.items():
        assert in_clear([log], secrets) == [], name
    assert in_clear(_strings(tracker_rows(stack, sender)), secrets) == []


def test_rest_sender_ids_are_masked_in_logs_and_on_the_staff_page(stack):
    mobile = TR_MOBILE[7]
    sender = f"0{mobile[:3]} {mobile[3:6]} {mobile[6:8]} {mobile[8:]}"
    email_sender = f"musteri.{uuid.uuid4().hex[:6]}@example.com"
    for conversation_id in (sender, email_sender):
        user = Conversation(stack["rasa"], conversation_id)
        user.say("merhaba")
        user.say(ASK_HUMAN["tr"])
        opened = refuse_then_accept(user, "tr", SAY_NO["tr"])
        ticket_id = TICKET_ID.search(opened).group()
        page = staff_page(stack, ticket_id)
        assert conversation_id not in page and "[PHONE]" in page or "[EMAIL]" in page
        assert in_clear([page], ["0" + mobile, email_sender.split("@")[0]]) == []
        # Staff still reach the conversation: the page read it from Rasa by its real id.
        assert stack["client"].tracker(conversation_id)["sender_id"] == conversation_id
    time.sleep(0.5)
    for name, log in server_logs(stack).items():
        assert in_clear([log], ["0" + mobile, email_sender.split("@")[0]]) == [], name


def test_numbers_kept_as_slot_values_are_masked_where_they_are_personal_data(stack):
    mobile = TR_MOBILE[5]
    user = Conversation(stack["rasa"], f"pii20-slot-{uuid.uuid4().hex[:8]}")
    user.say("merhaba")
    user.say(f"llama 3.1 8b qlora, 2048 token, bütçem {mobile} dolar")
    user.say("12000 örnek, 3 epoch")
    rows = tracker_rows(stack, user.sender)
    slots = [e for e in rows if e.get("event") == "slot"]
    assert any(e["name"] == "seq_len" and e["value"] == 2048 for e in slots), "ordinary numbers stay numbers"
    assert in_clear(_strings(rows), [mobile]) == []
    api = stack["client"].tracker(user.sender)
    assert in_clear(_strings(api), [mobile]) == []
    assert api["slots"].get("budget_usd") in (None, "[PHONE]")
