"""Generates data/rules/interruptions.yml: FAQ answers and the interruptions of the estimate form.

Each FAQ intent needs the same rules (answer it; answer it inside a form, then resume that form), and so does
each chit-chat intent. Both forms are covered: estimate_form, and handoff_form (a question asked while the bot waits
for the KVKK consent or the contact is answered, then the consent/contact question comes again). Writing 2 x 25
near-identical rules by hand is how rule files rot (rasa-demo's forms.yml), so they are generated from the intents
in domain/core.yml. tests/test_domain.py fails when the file is stale.

    .venv/bin/python -m actions.rulegen          # rewrite the file
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Dict, List

import yaml

ROOT = Path(__file__).resolve().parents[1]
DOMAIN_CORE = ROOT / "domain" / "core.yml"
OUTPUT = ROOT / "data" / "rules" / "interruptions.yml"
FORM = "estimate_form"
HANDOFF_FORM = "handoff_form"

# Intents answered by one action, the same way outside and inside the form.
CHITCHAT_ANSWERS: Dict[str, str] = {
    "greet": "action_greet",        # returns the customer's greeting in kind (actions/social.py)
    "start": "utter_greet",
    "set_language": "utter_greet",
    "thank": "action_thank",        # after an estimate: an offer to recalculate; a wish is returned
    "bot_challenge": "utter_bot_challenge",
    "out_of_scope": "action_default_fallback",
    "nlu_fallback": "action_default_fallback",
    "unsupported_language": "utter_languages_supported",
    # Issue 13: answered the same way outside and inside both forms, which then carry on.
    "capabilities": "utter_capabilities",
    "order_multi_gpu": "action_order_multi_gpu",  # the card asked about with its price, the process (round 7)
    "compare_options": "action_compare_options",
    "ask_about_answer": "action_answer_followup",
    "other_workload": "utter_other_workload",
    "own_card": "action_own_card",
    "switch_language": "action_repeat_last_answer",
    # Issue 21, round 2: selling hardware, a complaint about prices, sending the training file, a card's facts.
    "buy_hardware": "utter_rent_only",
    "complaint_price": "utter_complaint_price",
    "dataset_question": "utter_dataset_how",
    "card_facts": "action_card_facts",
    # Round 8: the cards at or under an hourly price.
    "cards_under_price": "action_cards_by_price",
}

# Inside a form the general answer does not fit: utter_thank suggests trying another value of an estimate that
# does not exist yet, utter_greet introduces the bot again with buttons that lead away from the question. The
# form's own question follows these, so they stay short (domain/responses_flow.yml).
IN_FORM_ANSWERS: Dict[str, str] = {"thank": "utter_thank_in_form", "greet": "utter_greet_in_form"}

# A card's price asked in the middle of the estimate form (the answer-first card given, the budget asked) is
# answered and the form left: resuming it would close it with its defaults and print the whole estimate, memory
# figures and all, under a price question (issue 21, round 2). The values stay; the next value re-runs the form.
LEAVES_ESTIMATE_FORM = ("card_facts", "cards_under_price")

# The form answers these itself (a hint and the same question), so they never interrupt it.
FORM_READS_ITSELF = ("nlu_fallback",)
# The handoff form reads everything that is not a question (a contact, yes/no, or "please answer yes or no"), so
# only questions and chit-chat interrupt it; the fallback's failed-turn count does not belong there.
# ValidateHandoffForm (actions/handoff.py) rejects exactly these intents: actions.common.HANDOFF_INTERRUPTIONS.
HANDOFF_SKIPS = ("nlu_fallback", "out_of_scope")


def faq_intents() -> List[str]:
    intents = yaml.safe_load(DOMAIN_CORE.read_text(encoding="utf-8"))["intents"]
    return [name for name in intents if isinstance(name, str) and name.startswith("faq_")]


def answers() -> Dict[str, str]:
    return {**CHITCHAT_ANSWERS, **{intent: "action_answer_faq" for intent in faq_intents()}}


def build_rules() -> dict:
    rules = []
    for intent, action in answers().items():
        rules.append({"rule": f"{intent}: {action}",
                      "steps": [{"intent": intent}, {"action": action}]})
        for form, skipped in ((FORM, FORM_READS_ITSELF), (HANDOFF_FORM, HANDOFF_SKIPS)):
            if intent in skipped:
                continue
            in_form = IN_FORM_ANSWERS.get(intent, action)
            if form == FORM and intent in LEAVES_ESTIMATE_FORM:
                rules.append({"rule": f"{intent} during {form}: {in_form}, then leave the form",
                              "condition": [{"active_loop": form}],
                              "steps": [{"intent": intent}, {"action": in_form},
                                        {"action": "action_deactivate_loop"}, {"active_loop": None},
                                        {"slot_was_set": [{"requested_slot": None}]}]})
                continue
            rules.append({"rule": f"{intent} during {form}: {in_form}, then resume the form",
                          "condition": [{"active_loop": form}],
                          "steps": [{"intent": intent}, {"action": in_form},
                                    {"action": form}, {"active_loop": form}]})
    return {"version": "3.1", "rules": rules}


def render() -> str:
    header = ("# GENERATED by `python -m actions.rulegen` from domain/core.yml - do not edit by hand.\n"
              "# FAQ and chit-chat answers, outside the forms and as interruptions of them.\n")
    return header + yaml.safe_dump(build_rules(), allow_unicode=True, sort_keys=False, width=120)


def main() -> int:
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(render(), encoding="utf-8")
    print(f"wrote {OUTPUT.relative_to(ROOT)} ({len(build_rules()['rules'])} rules)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
