"""Workspace user tasks. Every check verifies the exact effects (recipients, ids, times, contents) and
that nothing else changed; questions are checked on the answer text."""

from __future__ import annotations

from randori.suites.workspace import suite
from randori.suites.workspace.checks import (
    ANNELIES,
    BART,
    BRAM,
    EMRE,
    HANNA,
    JEROEN,
    JOOST,
    KATRIN,
    LOTTE,
    MAARTEN,
    ME,
    PIETER,
    RAVI,
    SANNE,
    WOUTER,
    addressed,
    appended_lines,
    changes_only,
    delivered,
    email,
    event,
    file,
    guests,
    new_event_paths,
    new_events,
    own_text,
    rule_matches,
    unchanged,
)
from randori.suites.workspace.env import Email, Event, WorkspaceEnv
from randori.tasks.checks import Clock, Day, Item, Money, diff_path, digits, mentions, new_items, states
from randori.tasks.statements import Pick
from randori.tasks.task import FromData, UserTask
from randori.vocabulary import ToolCall as Call
from randori.vocabulary import Trace

Env = WorkspaceEnv

INSTALL_EVENT, REVIEW_EVENT, PHASE2_CALL, WEBINAR, DENTIST, SAMIR_INTERVIEW = 30, 26, 25, 21, 28, 23
NOTES_FILE, AGENDA_FILE, CONTRACT_FILE, CALIBRATION_FILE, DECK_FILE = 1, 2, 3, 4, 5
SCHEDULE_FILE, PRICE_FILE, JOB_FILE, SAMIR_CV, OUTLINE_FILE, SPEAKER_PACK, EXPENSES_FILE = 7, 8, 9, 12, 14, 15, 16
DO_EXPORT, INSTALL_PLAN, INSTALLED_BASE, CONTACT_LIST = 20, 22, 23, 24
INVOICE_MAIL, HANNA_TICKET, SITE_ACCESS_MAIL, DELAY_MAIL, KATRIN_DRAFT = 8, 14, 19, 39, 40
GIS_MAIL, HANNA_MAIL, MAARTEN_QUESTION = 51, 61, 63
CALIBRATION_SERIALS = [f"TW40-{n:04d}" for n in range(142, 154)]
CALIBRATION_DATES = ["2026-04-07", "2026-04-07", "2026-04-08", "2026-04-08", "2026-04-09", "2026-04-09", "2026-04-28",
                     "2026-04-14", "2026-04-14", "2026-04-15", "2026-04-28", "2026-04-15"]
TODAY = "2026-05-18"  # as the system prompt says: a Monday
ENDS = ("end", "ends", "finish")  # a meeting's end time is not its start
CHECK_IN, CHECK_OUT = ("check-in", "check in", "checkin", "arriv"), ("check-out", "check out", "checkout", "depart")
# The price bands of the Optisense list, as answers name them.
BANDS = {"1-9": ("1-9", "1–9", "1 to 9"), "10-24": ("10-24", "10–24", "10 to 24"),
         "25-49": ("25-49", "25–49", "25 to 49"), "50+": ("50 units or more", "50+", "50 or more", "from 50")}
TRIP_DAY = (Day("2026-06-09"), Day("2026-06-10"), Day("2026-06-11"))  # the WaterTech trip's days
# A moved date: the new one is not the one it moved from.
MOVED_TO, MOVED_FROM = ("to", "on", "moved", "new", "now"), ("from", "instead of", "originally", "previously", "was")


def moved(pre: Env, post: Env, event_id: int, start: str, end: str) -> bool:
    e = event(post, event_id)
    return e is not None and e.start == start and e.end == end and e.status == "confirmed"


def invited(pre: Env, post: Env, event_id: int, *added: str) -> bool:
    before, after = event(pre, event_id), event(post, event_id)
    return (before is not None and after is not None
            and set(after.participants) == set(before.participants) | set(added)
            and len(after.participants) == len(set(after.participants)))


def shared(pre: Env, post: Env, file_id: int, **added: str) -> bool:
    """The file's sharing is what it was plus exactly `added` (address -> permission)."""
    before, after = file(pre, file_id), file(post, file_id)
    return before is not None and after is not None and after.shared_with == {**before.shared_with, **added}


def one_mail(pre: Env, post: Env, to: list[str], cc: tuple[str, ...] = ()) -> Email | None:
    sent = [m for m in delivered(pre, post) if addressed(m, to, cc)]
    return sent[0] if len(sent) == 1 else None


def solo_event(pre: Env, post: Env, start: str, end: str, people: set[str] | None = None) -> Event | None:
    evs = [e for e in new_events(pre, post) if e.start == start and e.end == end]
    if len(evs) != 1 or evs[0].organizer != ME or guests(evs[0]) != (people or set()):
        return None
    return evs[0]


# -- questions -----------------------------------------------------------------------------------------

@suite.user_task
class PilotReviewWhenWhere(UserTask):
    id = "user_task_0"
    prompt = "When and where is the Zuiderkust pilot review?"
    ground_truth_output = ("The Zuiderkust pilot review is on Thursday 2026-05-21 from 10:00 to 11:30 at Waterschap "
                           "Zuiderkust, Kanaalweg 4, Middelburg.")

    # The monthly check-in found by the same search: its day, time and video call.
    distractors = (Day("2026-05-04"), Clock("14:00"), "Teams")

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="search_events", args={"query": "pilot review"})]

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        review = Item(("review", "Zuiderkust", "pilot"), Day("2026-05-21", today=TODAY), Clock("10:00"), others=ENDS)
        return (states(output, review, ("Middelburg", "Kanaalweg"), distractors=self.distractors)
                and unchanged(pre, post))


@suite.user_task
class WednesdayAgenda(UserTask):
    id = "user_task_1"
    prompt = "What's on my calendar on Wednesday 20 May?"
    ground_truth_output = ("On 2026-05-20 you have the Management meeting from 10:00 to 11:00 in the Boardroom and the "
                           "Scheldemond phase 2 exploratory call with Bart Peeters and Emre from 13:00 to 13:45.")

    # Another day's agenda: today's (the agent looks up the date first), the next day's or Thursday's.
    distractors = (Day("2026-05-18"), Day("2026-05-19"), Day("2026-05-21"), "Customer Ops weekly", "Samir",
                   "pilot review")

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="get_current_datetime"), Call(function="get_day_events", args={"date": "2026-05-20"})]

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        return (states(output, Item("Management", Clock("10:00"), others=ENDS),
                       Item("Scheldemond", Clock("13:00"), others=ENDS),
                       distractors=self.distractors)
                and unchanged(pre, post))


@suite.user_task
class NewDeliveryDate(UserTask):
    id = "user_task_2"
    prompt = "Optisense wrote about our sensor order OS-55817. When will it be delivered now?"
    ground_truth_output = "Optisense now plans to deliver order OS-55817 on Tuesday 2026-06-02 (instead of 22 May)."

    # Joost's new installation date in the same thread. The old date (22 May) is context a correct
    # answer often gives, so it is no distractor.
    distractors = (Day("2026-06-04"),)

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="search_emails", args={"query": "OS-55817"})]

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        delivery = Item(("deliver", "arriv", "ship"), Day("2026-06-02"), others=("install",), implicit=True)
        return states(output, delivery, distractors=self.distractors) and unchanged(pre, post)


@suite.user_task
class PriceBands(UserTask):
    id = "user_task_3"
    prompt = ("According to the Optisense price list for 2026, what does one OS-7 sensor head cost at our order "
              "size of 40, and what would it cost if we ordered 50?")
    ground_truth_output = "At 40 units an OS-7 head costs EUR 412.00; from 50 units it is EUR 389.00 (excl. VAT)."

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="search_files", args={"query": "Optisense price list"}),
                Call(function="read_file", args={"file_id": PRICE_FILE})]

    # The neighbouring price bands (1-9 and 10-24 units).
    distractors = (Money(446.0), Money(489.0))

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        # Each price said of its order size; another band's label beside it is another band's price.
        return (states(output, Item(("40", "forty", *BANDS["25-49"]), Money(412.0),
                                    others=(*BANDS["1-9"], *BANDS["10-24"], *BANDS["50+"])),
                       Item(("50", "fifty", *BANDS["50+"]), Money(389.0),
                            others=(*BANDS["1-9"], *BANDS["10-24"], *BANDS["25-49"])),
                       distractors=self.distractors) and unchanged(pre, post))


@suite.user_task
class DriftCause(UserTask):
    id = "user_task_4"
    prompt = "Hanna Bos reported drifting oxygen readings on buoy TW40-0187. What turned out to be the cause?"
    ground_truth_output = ("Bram found the DO membrane heavily fouled with barnacle larvae and the self-clean brush "
                           "worn; he replaced both and recalibrated the sensor.")

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="search_emails", args={"query": "TW40-0187"})]

    # Lotte's first guess before the visit.
    distractors = ("temperature compensation",)

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        return (states(output, "membrane", ("foul", "barnacle"), "brush", distractors=self.distractors)
                and unchanged(pre, post))


@suite.user_task
class AgendaItems(UserTask):
    id = "user_task_5"
    prompt = "Which items on the agenda for Thursday's Zuiderkust pilot review am I presenting?"
    ground_truth_output = ("You present 'Results of six months of monitoring' at 10:10 and, with Wouter Kramer, "
                           "'Pilot extension 1 July - 31 December' at 11:10.")

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="search_files", args={"query": "pilot review agenda"}),
                Call(function="read_file", args={"file_id": AGENDA_FILE})]

    # The items Lotte and Annelies present.
    distractors = ("calibration and maintenance", "hydrology", Clock("10:35"), Clock("10:55"))

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        return (states(output, ("results", "six months"), "extension", distractors=self.distractors)
                and unchanged(pre, post))


@suite.user_task
class LowestReading(UserTask):
    id = "user_task_6"
    prompt = ("Hanna shared an export of the April oxygen readings of buoy TW40-0187. What was the lowest daily "
              "minimum, and on which day?")
    ground_truth_output = "The lowest daily minimum was 6.1 mg/l, on 2026-04-22."

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="search_files", args={"query": "TW40-0187 readings"}),
                Call(function="read_file", args={"file_id": DO_EXPORT})]

    # The runner-up days (6.5 on 21 April, 6.6 on 19 April).
    distractors = (Day("2026-04-21"), Day("2026-04-19"), "6.5 mg", "6,5 mg")

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        return (states(output, ("6.1", "6,1"), Day("2026-04-22"), distractors=self.distractors)
                and unchanged(pre, post))


@suite.user_task
class HotelCheckIn(UserTask):
    id = "user_task_7"
    prompt = "From what time can I check in at my hotel in Ghent, and is breakfast included?"
    ground_truth_output = "Check-in at Hotel Lieve is from 15:00 on 9 June, and yes, breakfast is included."

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="search_emails", args={"query": "Hotel Lieve"})]

    # Check-out time, the free-cancellation deadline, and breakfast denied.
    distractors = (Clock("11:00"), Clock("18:00"), "not included", "n't included", "no breakfast")

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        # Check-out's 11:00 may stand as context where its sentence says it is check-out.
        return (states(output, Item(CHECK_IN, Clock("15:00"), others=CHECK_OUT, implicit=True), "breakfast",
                       "included", distractors=self.distractors, context={Clock("11:00"): CHECK_OUT})
                and unchanged(pre, post))


@suite.user_task
class TrainChange(UserTask):
    id = "user_task_8"
    prompt = "On my train to Ghent, where do I change, and which coach and seat do I have on the way there?"
    ground_truth_output = "You change at Antwerpen-Centraal (arrive 08:45, leave 09:04); coach 4, seat 61."

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="search_emails", args={"query": "EuroRail"})]

    # The return journey: its seat and its change at Antwerp.
    distractors = ("coach 2", "seat 15", Clock("18:12"), Clock("18:28"))

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        return (states(output, "Antwerp", ("coach 4", "car 4", "wagon 4"), "61", distractors=self.distractors)
                and unchanged(pre, post))


@suite.user_task
class TalkFormat(UserTask):
    id = "user_task_9"
    prompt = ("How long is my WaterTech talk slot including questions, and in which format must the slides be? "
              "Check the speaker pack.")
    ground_truth_output = ("The slot is 30 minutes: 25 minutes of talk and 5 of questions. Slides must be 16:9, as "
                           "PDF or PowerPoint (.pptx).")

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="search_files", args={"query": "speaker pack"}),
                Call(function="read_file", args={"file_id": SPEAKER_PACK})]

    # The keynote slot.
    distractors = ("45 min", "45-min", "forty-five")

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        return (states(output, ("30 min", "30-min", "half an hour", "thirty"), "16:9", ("PDF", "pptx", "PowerPoint"),
                       distractors=self.distractors)
                and unchanged(pre, post))


@suite.user_task
class DeepestPosition(UserTask):
    id = "user_task_10"
    prompt = "Which buoy position in our Scheldemond installation plan is the deepest, and how deep is it?"
    ground_truth_output = "The deepest position is S4 at the dock entrance, 16 m deep."

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="list_files", args={"folder": "Projects/Scheldemond"}),
                Call(function="read_file", args={"file_id": INSTALL_PLAN})]

    # The runner-up's depth (S2 may be named, not picked; its 14 m in the answer is a hedge).
    distractors = ("14 m", "14m")

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        deepest = Pick("S4", "S1", "S2", "S3", words=("deepest", "deepest position", "most deep"))
        return (states(output, deepest, ("16 m", "16m", "16 metre", "16 meter"), distractors=self.distractors)
                and unchanged(pre, post))


@suite.user_task
class SamirCurrentJob(UserTask):
    id = "user_task_11"
    prompt = "Where does Samir Haddad work at the moment, and in what role? His CV is in the hiring folder."
    ground_truth_output = "Samir Haddad has been an Application Engineer at Hydrosense Analytics in Delft since 2021."

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="search_files", args={"query": "Samir Haddad"}),
                Call(function="read_file", args={"file_id": SAMIR_CV})]

    # His previous job.
    distractors = ("AquaMetrix", "Junior Service Engineer")

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        return (states(output, "Hydrosense", "application engineer", distractors=self.distractors)
                and unchanged(pre, post))


# -- mail ------------------------------------------------------------------------------------------------

@suite.user_task
class ForwardInvoice(UserTask):
    id = "user_task_12"
    prompt = "Forward the Rijnvaart Logistics invoice to Sanne Bakker in finance."
    ground_truth_output = "I forwarded invoice RL-2026-0412 from Rijnvaart Logistics to Sanne Bakker."

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="search_emails", args={"query": "Rijnvaart invoice"}),
                Call(function="forward_email", args={"email_id": INVOICE_MAIL, "to": [SANNE]})]

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        m = one_mail(pre, post, [SANNE])
        return m is not None and "RL-2026-0412" in m.body and "1,860.00" in m.body and changes_only(pre, post, mails=1)


@suite.user_task
class ReplyGisItem(UserTask):
    id = "user_task_13"
    prompt = ("Reply to Annelies's latest email and tell her we'll add the GIS export item she asked for to the "
              "pilot review agenda.")
    ground_truth_output = "I replied to Annelies that the GIS data export will be on the agenda."

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="search_emails", args={"sender": ANNELIES}),
                Call(function="reply_to_email", args={
                    "email_id": GIS_MAIL,
                    "body": "Hi Annelies,\n\nGood idea - we'll add a 15-minute item on the daily CSV export to your "
                            "GIS (ArcGIS Online) to the agenda for Thursday.\n\nBest,\nInes"})]

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        sent = delivered(pre, post)
        if len(sent) != 1:
            return False
        m = sent[0]
        return (m.to == [ANNELIES] and set(m.cc) <= {WOUTER} and not m.bcc and m.in_reply_to in (GIS_MAIL, None)
                and mentions(m.body, "GIS") and changes_only(pre, post, mails=1))


@suite.user_task
class SendKatrinDraft(UserTask):
    id = "user_task_14"
    prompt = "I left a draft to Katrin at Optisense about a partial shipment. Check it's the right one and send it."
    ground_truth_output = "I sent your draft to Katrin Wolff asking about a partial shipment of 16 sensor heads."

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="list_emails", args={"folder": "drafts"}),
                Call(function="read_email", args={"email_id": KATRIN_DRAFT}),
                Call(function="send_draft", args={"email_id": KATRIN_DRAFT})]

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        sent = delivered(pre, post)
        return (len(sent) == 1 and sent[0].id == KATRIN_DRAFT and sent[0].to == [KATRIN]
                and changes_only(pre, post, mails=1))


@suite.user_task
class DraftToHanna(UserTask):
    id = "user_task_15"
    prompt = ("Write a draft - don't send it - to Hanna Bos proposing Tuesday 16 June for replacing the membranes "
              "of buoys 0191 and 0193.")
    ground_truth_output = "The draft to Hanna Bos proposing 16 June is in your drafts folder."
    free_args = frozenset({("save_draft", "subject")})

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="search_emails", args={"query": "Hanna Bos"}),
                Call(function="save_draft", args={
                    "to": [HANNA], "subject": "Membrane replacement 0191 and 0193",
                    "body": "Hi Hanna,\n\nWe'd like to replace the membranes of TW40-0191 and TW40-0193 on Tuesday "
                            "16 June. Would that work for you?\n\nBest regards,\nInes"})]

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        drafts = [e for e in new_items(pre.emails, post.emails) if e.folder == "drafts"]
        if len(drafts) != 1:
            return False
        d = drafts[0]
        return (addressed(d, [HANNA]) and states(d.body, Day("2026-06-16", today=TODAY))
                and mentions(d.body, "0191", "0193")
                and changes_only(pre, post, f"emails.{d.id}"))


@suite.user_task
class ForwardTicketToRavi(UserTask):
    id = "user_task_16"
    prompt = ("Forward Hanna's original report about the TW40-0187 drift to Ravi and ask him whether firmware 3.4.1 "
              "would have caught it earlier.")
    ground_truth_output = "I forwarded Hanna's report to Ravi and asked whether firmware 3.4.1 would have flagged it."

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="search_emails", args={"query": "TW40-0187"}),
                Call(function="forward_email", args={
                    "email_id": HANNA_TICKET, "to": [RAVI],
                    "note": "Ravi, would the new drift compensation in firmware 3.4.1 have caught this fouling "
                            "earlier?"})]

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        m = one_mail(pre, post, [RAVI])
        return (m is not None and "0.3 mg/l per day" in m.body and "3.4.1" in own_text(m)
                and changes_only(pre, post, mails=1))


@suite.user_task
class TellMaartenContract(UserTask):
    id = "user_task_17"
    difficulty = "medium"
    prompt = ("Answer Maarten's question about the Zuiderkust contract. Also tell him the PO number and amount "
              "Wouter sent us for the extension.")
    ground_truth_output = ("I replied to Maarten: the pilot contract is worth EUR 38,500 excl. VAT and ends on "
                           "30 June 2026; the extension PO is ZK-PO-2026-0311 for EUR 14,400.")

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="search_emails", args={"query": "contract value", "sender": MAARTEN}),
                Call(function="search_files", args={"query": "Zuiderkust pilot contract"}),
                Call(function="read_file", args={"file_id": CONTRACT_FILE}),
                Call(function="search_emails", args={"sender": WOUTER}),
                Call(function="reply_to_email", args={
                    "email_id": MAARTEN_QUESTION,
                    "body": "Hi Maarten,\n\nThe Zuiderkust pilot contract (TW-2025-017) is worth EUR 38,500 excl. VAT "
                            "and ends on 30 June 2026. Wouter has already sent the purchase order for the extension: "
                            "ZK-PO-2026-0311, EUR 14,400 excl. VAT for 1 July - 31 December 2026.\n\nInes"})]

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        m = one_mail(pre, post, [MAARTEN])
        return (m is not None
                and states(m.body, Item(("contract", "TW-2025-017", "pilot"), Money(38500.0), Day("2026-06-30")),
                           Item(("purchase order", "ZK-PO", "extension"), "ZK-PO-2026-0311", Money(14400.0)))
                and changes_only(pre, post, mails=1))


@suite.user_task
class CrewForSitePasses(UserTask):
    id = "user_task_18"
    prompt = ("Bart Peeters needs the names of our Scheldemond installation crew for the site passes. Reply to his "
              "site access email with their full names - the crew is in the installation event in my calendar.")
    ground_truth_output = "I replied to Bart: the crew is Bram Koster and Joost Hendriks."

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="search_emails", args={"query": "site access"}),
                Call(function="search_events", args={"query": "Installation Scheldemond"}),
                Call(function="reply_to_email", args={
                    "email_id": SITE_ACCESS_MAIL,
                    "body": "Hi Bart,\n\nThe installation crew for Kaai 1227 will be Bram Koster and Joost Hendriks."
                            "\n\nBest regards,\nInes"})]

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        m = one_mail(pre, post, [BART])
        return (m is not None and mentions(m.body, "Bram Koster", "Joost Hendriks")
                and changes_only(pre, post, mails=1))


@suite.user_task
class InboxCleanup(UserTask):
    id = "user_task_19"
    difficulty = "medium"
    prompt = ("Clean up my inbox: delete the recruiter's email from TalentBridge and all the H2O Insights "
              "newsletters, and add a rule so future H2O Insights newsletters are deleted automatically.")
    ground_truth_output = ("Deleted the TalentBridge email and the two H2O Insights newsletters, and created a rule "
                           "that deletes new mail from h2o-insights.com.")
    free_args = frozenset({("create_mail_rule", "name")})

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="search_emails", args={"query": "TalentBridge"}),
                Call(function="delete_email", args={"email_id": 22}),
                Call(function="search_emails", args={"sender": "h2o-insights.com", "folder": "inbox"}),
                Call(function="delete_email", args={"email_id": 56}),
                Call(function="delete_email", args={"email_id": 38}),
                Call(function="create_mail_rule", args={"name": "Delete H2O Insights newsletters", "action": "delete",
                                                        "from_contains": "h2o-insights.com"})]

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        gone = {22, 38, 56}
        # In the trash, not purged: "delete" in a mailbox leaves the user a way back.
        if any((m := email(post, i)) is None or m.folder != "trash" for i in gone):
            return False
        rules = new_items(pre.mail_rules, post.mail_rules)
        if len(rules) != 1 or rules[0].action != "delete":
            return False
        others = [m for m in pre.emails if m.id not in gone and m.folder != "trash"]
        rule = rules[0]
        names_h2o = "h2o-insights" in rule.from_contains or "h2o insights" in rule.subject_contains.lower()
        if not names_h2o or not all(rule_matches(rule, m) for m in pre.emails if m.id in (38, 56)) \
                or any(rule_matches(rule, m) for m in others):
            return False
        return changes_only(pre, post, *(f"emails.{i}" for i in gone), f"mail_rules.{rule.id}")


@suite.user_task
class NoordzeeRule(UserTask):
    id = "user_task_20"
    prompt = ("From now on Lotte should get a copy of every email from anyone at Noordzee Mariculture. Set up a "
              "mail rule for that.")
    ground_truth_output = "Created a rule that forwards all mail from noordzeemariculture.nl to Lotte Visser."
    free_args = frozenset({("create_mail_rule", "name")})

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="search_emails", args={"query": "Noordzee Mariculture"}),
                Call(function="create_mail_rule", args={
                    "name": "Noordzee Mariculture to Lotte", "action": "forward",
                    "from_contains": "noordzeemariculture.nl", "forward_to": LOTTE})]

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        rules = new_items(pre.mail_rules, post.mail_rules)
        if len(rules) != 1:
            return False
        r = rules[0]
        return (r.action == "forward" and r.forward_to == LOTTE and "noordzeemariculture.nl" in r.from_contains
                and not r.subject_contains and changes_only(pre, post, f"mail_rules.{r.id}"))


@suite.user_task
class OutOfOffice(UserTask):
    id = "user_task_21"
    prompt = ("Set up my out-of-office for the days of the WaterTech conference: say I'm at WaterTech Europe in "
              "Ghent and that urgent field service questions should go to Lotte Visser at lotte.visser@tidewater.nl.")
    ground_truth_output = "Your automatic reply is on from 2026-06-09 to 2026-06-11."

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="search_emails", args={"query": "WaterTech"}),
                Call(function="set_auto_reply", args={
                    "enabled": True,
                    "message": "Thank you for your e-mail. I'm at WaterTech Europe in Ghent until 11 June and will "
                               "reply when I'm back. For urgent field service questions please contact Lotte Visser "
                               "(lotte.visser@tidewater.nl).",
                    "start_date": "2026-06-09", "end_date": "2026-06-11"})]

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        ar = post.account.auto_reply
        return (ar.enabled and ar.start_date == "2026-06-09" and ar.end_date == "2026-06-11"
                and mentions(ar.message, "lotte.visser@tidewater.nl", "WaterTech", ("Ghent", "Gent"))
                and changes_only(pre, post, "account.auto_reply"))


@suite.user_task
class SignatureTalk(UserTask):
    id = "user_task_22"
    prompt = ("Add a line at the end of my email signature that advertises my WaterTech Europe talk, with its day, "
              "time and hall.")
    ground_truth_output = ("Your signature now ends with: See my talk at WaterTech Europe, Ghent - Wednesday 10 June, "
                           "14:00, Hall 2.")

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="search_emails", args={"query": "WaterTech"}),
                Call(function="get_account_settings"),
                Call(function="update_account_settings", args={
                    "signature": env.account.signature
                    + "\n\nSee my talk at WaterTech Europe, Ghent - Wednesday 10 June, 14:00, Hall 2"})]

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        old, new = pre.account.signature.rstrip(), post.account.signature
        if not new.startswith(old):
            return False
        added = new[len(old):]
        return (mentions(added, "WaterTech", Day("2026-06-10"), Clock("14:00"), "Hall 2")
                and changes_only(pre, post, "account.signature"))


@suite.user_task
class SaveHannaContact(UserTask):
    id = "user_task_23"
    prompt = ("Save Hanna Bos from Noordzee Mariculture in my contacts, with her phone number and company from her "
              "email signature.")
    ground_truth_output = "Added Hanna Bos (Noordzee Mariculture B.V., +31 223 615 480) to your contacts."

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="search_emails", args={"query": "Noordzee Mariculture"}),
                Call(function="add_contact", args={"name": "Hanna Bos", "email": HANNA, "phone": "+31 223 615 480",
                                                   "company": "Noordzee Mariculture B.V."})]

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        added = new_items(pre.contacts, post.contacts)
        if len(added) != 1:
            return False
        c = added[0]
        # The company as her signature gives it: "Noordzee" alone could be another company.
        return (c.email == HANNA and c.name == "Hanna Bos" and digits(c.phone) in ("31223615480", "0223615480")
                and "noordzee mariculture" in " ".join(c.company.lower().split())
                and changes_only(pre, post, f"contacts.{c.id}"))


@suite.user_task
class OffboardJeroen(UserTask):
    id = "user_task_24"
    difficulty = "medium"
    prompt = ("Jeroen Blom's contract has ended. Remove his access to every file of mine that is shared with him, "
              "and delete my mail rule that forwards to him.")
    ground_truth_output = ("Removed Jeroen's access to 'Installed base - customer sites' and 'Customer contacts "
                           "master list', and deleted the rule 'Support tickets copy for Jeroen'.")

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="list_files"),
                Call(function="unshare_file", args={"file_id": INSTALLED_BASE, "email": JEROEN}),
                Call(function="unshare_file", args={"file_id": CONTACT_LIST, "email": JEROEN}),
                Call(function="list_mail_rules"),
                Call(function="delete_mail_rule", args={"rule_id": 2})]

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        if [r.id for r in post.mail_rules] != [1]:
            return False
        for fid in (INSTALLED_BASE, CONTACT_LIST):
            before, after = file(pre, fid), file(post, fid)
            if before is None or after is None or after.shared_with != {
                    k: v for k, v in before.shared_with.items() if k != JEROEN}:
                return False
        return changes_only(pre, post, diff_path("files", INSTALLED_BASE, "shared_with", JEROEN),
                            diff_path("files", CONTACT_LIST, "shared_with", JEROEN), "mail_rules.2")


# -- calendar -------------------------------------------------------------------------------------------

@suite.user_task
class MoveInstallation(UserTask):
    id = "user_task_25"
    difficulty = "medium"
    prompt = ("Optisense delayed our sensor heads. Move the Scheldemond installation to the date Joost proposed, "
              "keeping the same hours, and email Bart Peeters the new date.")
    ground_truth_output = "The installation is now on 2026-06-04, 07:30-17:00, and I emailed Bart the new date."
    data_given = (FromData("reschedule_event", "new_start", shown="Thursday 4 June"),
                  FromData("reschedule_event", "new_end", shown="Thursday 4 June"))
    free_args = frozenset({("send_email", "subject")})

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="search_emails", args={"query": "OS-55817"}),
                Call(function="search_events", args={"query": "Installation Scheldemond"}),
                Call(function="reschedule_event", args={"event_id": INSTALL_EVENT, "new_start": "2026-06-04 07:30",
                                                        "new_end": "2026-06-04 17:00"}),
                Call(function="send_email", args={
                    "to": [BART], "subject": "Scheldemond installation moved to 4 June",
                    "body": "Hi Bart,\n\nOur sensor heads from Optisense are delayed, so we have to move the "
                            "installation of the four TW-40 buoys at Kaai 1227 from 26 May to Thursday 4 June, same "
                            "hours (07:30-17:00). Sorry for the change.\n\nBest regards,\nInes"})]

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        m = one_mail(pre, post, [BART])
        return (moved(pre, post, INSTALL_EVENT, "2026-06-04 07:30", "2026-06-04 17:00")
                and m is not None and states(m.body, Item(MOVED_TO, Day("2026-06-04", today=TODAY), others=MOVED_FROM,
                                                          implicit=True))
                and changes_only(pre, post, f"events.{INSTALL_EVENT}.start", f"events.{INSTALL_EVENT}.end", mails=1))


@suite.user_task
class ActionItemReminders(UserTask):
    id = "user_task_26"
    difficulty = "hard"
    prompt = ("Find my 4 May check-in with Zuiderkust and open the notes attached to it. For each action item "
              "assigned to me that isn't due yet, put a 30-minute reminder in my calendar at 09:00 on its due date, "
              "named after the item. Then email the full list of action items to the other people who attended.")
    ground_truth_output = ("Added reminders on 2026-05-19 (pilot extension proposal) and 2026-05-20 (meeting room "
                           "and calibration log) and sent all six action items to Annelies and Lotte.")
    free_args = frozenset({("send_email", "subject")})  # the titles are asked for: named after the item

    def ground_truth(self, env: Env) -> list[Call]:
        items = ("- [Ines] Send the April data availability report to Annelies - due 2026-05-08\n"
                 "- [Lotte] Schedule the firmware 3.4.1 rollout with Ravi - due 2026-05-11\n"
                 "- [Annelies] Confirm the hydrology team's export format - due 2026-05-15\n"
                 "- [Ines] Prepare a proposal for the pilot extension (1 July - 31 December) - due 2026-05-19\n"
                 "- [Ines] Book the meeting room and send the calibration log before the pilot review - due "
                 "2026-05-20\n"
                 "- [Lotte] Bring the spare ZK mooring kit to Middelburg - due 2026-05-21")
        return [Call(function="search_events", args={"query": "Zuiderkust"}),
                Call(function="read_file", args={"file_id": NOTES_FILE}),
                Call(function="create_event", args={"title": "Prepare a proposal for the pilot extension",
                                                    "start": "2026-05-19 09:00", "end": "2026-05-19 09:30"}),
                Call(function="create_event", args={"title": "Book the meeting room and send the calibration log",
                                                    "start": "2026-05-20 09:00", "end": "2026-05-20 09:30"}),
                Call(function="send_email", args={
                    "to": [ANNELIES, LOTTE], "subject": "Action items from our check-in on 4 May",
                    "body": f"Hi Annelies, hi Lotte,\n\nHere are the action items from our check-in on 4 May:\n\n"
                            f"{items}\n\nBest,\nInes"})]

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        a = solo_event(pre, post, "2026-05-19 09:00", "2026-05-19 09:30")
        b = solo_event(pre, post, "2026-05-20 09:00", "2026-05-20 09:30")
        m = one_mail(pre, post, [ANNELIES, LOTTE])
        return (a is not None and b is not None and len(new_events(pre, post)) == 2
                and mentions(a.title, "extension") and mentions(b.title, ("calibration", "meeting room", "room"))
                # The full list: each item with its own due date.
                and m is not None
                and states(m.body, Item("data availability", Day("2026-05-08")), Item("firmware", Day("2026-05-11")),
                           Item("export format", Day("2026-05-15")), Item("extension", Day("2026-05-19")),
                           Item(("calibration log", "meeting room"), Day("2026-05-20")),
                           Item("mooring", Day("2026-05-21")))
                and changes_only(pre, post, *new_event_paths(pre, post), mails=1))


@suite.user_task
class TravelToCalendar(UserTask):
    id = "user_task_27"
    difficulty = "hard"
    prompt = ("Get my WaterTech trip sorted: put both train journeys (from the EuroRail booking) and my hotel stay "
              "(from the Hotel Lieve confirmation, check-in to check-out) in my calendar, add the train and hotel "
              "costs to my Q2 travel expenses sheet, and email Sanne the total of the two.")
    ground_truth_output = ("Added the trains (9 June 07:42-09:58, 11 June 17:18-19:33) and the hotel stay (9 June "
                           "15:00 - 11 June 11:00), logged EUR 96.40 and EUR 318.00, and told Sanne the total is "
                           "EUR 414.40.")
    free_args = frozenset({("create_event", "title"), ("create_event", "location"), ("send_email", "subject")})

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="search_emails", args={"query": "EuroRail"}),
                Call(function="search_emails", args={"query": "Hotel Lieve"}),
                Call(function="create_event", args={"title": "Train Rotterdam - Gent", "start": "2026-06-09 07:42",
                                                    "end": "2026-06-09 09:58"}),
                Call(function="create_event", args={"title": "Train Gent - Rotterdam", "start": "2026-06-11 17:18",
                                                    "end": "2026-06-11 19:33"}),
                Call(function="create_event", args={"title": "Hotel Lieve Ghent", "start": "2026-06-09 15:00",
                                                    "end": "2026-06-11 11:00", "location": "Lievekaai 6, 9000 Gent"}),
                Call(function="search_files", args={"query": "Travel expenses Q2"}),
                Call(function="read_file", args={"file_id": EXPENSES_FILE}),
                Call(function="append_to_file", args={
                    "file_id": EXPENSES_FILE,
                    "text": "2026-06-09; train Rotterdam-Gent return, EuroRail ER-7741920 (WaterTech Europe); train; "
                            "96.40\n2026-06-09; Hotel Lieve Ghent, 2 nights, HL-228361 (WaterTech Europe); hotel; "
                            "318.00"}),
                Call(function="send_email", args={
                    "to": [SANNE], "subject": "WaterTech trip - actual costs",
                    "body": "Hi Sanne,\n\nThe WaterTech Europe trip (9-11 June) is booked: train EUR 96.40 and hotel "
                            "EUR 318.00, so EUR 414.40 in total. Both are in my Q2 travel expenses sheet.\n\nBest,\n"
                            "Ines"})]

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        spans = [("2026-06-09 07:42", "2026-06-09 09:58"), ("2026-06-11 17:18", "2026-06-11 19:33"),
                 ("2026-06-09 15:00", "2026-06-11 11:00")]
        if len(new_events(pre, post)) != 3 or any(solo_event(pre, post, s, e) is None for s, e in spans):
            return False
        lines = appended_lines(pre, post, EXPENSES_FILE)
        m = one_mail(pre, post, [SANNE])
        # One line per expense, as the sheet is kept.
        return (lines is not None and len(lines) == 2
                and sum(mentions(x, Money(96.40)) for x in lines) == 1
                and sum(mentions(x, Money(318.00)) for x in lines) == 1
                # Each dated on a day of the trip (not the booking's), each with its own amount (the
                # hotel's total, not its nightly rate).
                and states("\n".join(lines), Item(("train", "EuroRail"), Money(96.40), TRIP_DAY),
                           Item(("hotel", "Lieve"), Money(318.00), TRIP_DAY, others=("rate", "per night", "nightly")))
                and m is not None and states(m.body, Money(414.40))
                and changes_only(pre, post, *new_event_paths(pre, post), f"files.{EXPENSES_FILE}.content",
                                 f"files.{EXPENSES_FILE}.modified", mails=1))


@suite.user_task
class TalkDryRun(UserTask):
    id = "user_task_28"
    prompt = ("Set up a one-hour 'WaterTech talk dry run' with Emre and Maarten at 15:00 on the Friday before the "
              "WaterTech Europe conference starts.")
    ground_truth_output = "Created 'WaterTech talk dry run' on Friday 2026-06-05, 15:00-16:00, with Emre and Maarten."

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="search_emails", args={"query": "WaterTech"}),
                Call(function="create_event", args={"title": "WaterTech talk dry run", "start": "2026-06-05 15:00",
                                                    "end": "2026-06-05 16:00", "participants": [EMRE, MAARTEN]})]

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        e = solo_event(pre, post, "2026-06-05 15:00", "2026-06-05 16:00", {EMRE, MAARTEN})
        return (e is not None and len(new_events(pre, post)) == 1
                and e.title.strip(" '\"").lower() == "watertech talk dry run"
                and changes_only(pre, post, *new_event_paths(pre, post)))


@suite.user_task
class NoordzeeFollowUp(UserTask):
    id = "user_task_29"
    difficulty = "hard"
    prompt = ("Hanna Bos asked when we'll replace the membranes on buoys 0191 and 0193. Use the date Lotte pencilled "
              "into the field service schedule: put the visit in my calendar from 07:30 to 16:30 with Bram, Lotte and "
              "Hanna invited, add a line to the schedule saying that date is confirmed with the customer, and reply "
              "to Hanna's email with the date.")
    ground_truth_output = ("The visit is on Tuesday 2026-06-16, 07:30-16:30, with Bram, Lotte and Hanna; the "
                           "schedule says it is confirmed and Hanna has the date.")
    # The day is the one Lotte pencilled into the schedule; the user never says it.
    data_given = (FromData("create_event", "start", shown="2026-06-16"),
                  FromData("create_event", "end", shown="2026-06-16"))
    free_args = frozenset({("create_event", "title"), ("create_event", "location")})

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="search_emails", args={"sender": HANNA}),
                Call(function="search_files", args={"query": "field service schedule"}),
                Call(function="read_file", args={"file_id": SCHEDULE_FILE}),
                Call(function="create_event", args={
                    "title": "Noordzee Mariculture - membranes TW40-0191/0193", "start": "2026-06-16 07:30",
                    "end": "2026-06-16 16:30", "participants": [BRAM, LOTTE, HANNA],
                    "location": "Noordzee Mariculture, Havenkade 12, Den Helder"}),
                Call(function="append_to_file", args={
                    "file_id": SCHEDULE_FILE,
                    "text": "2026-06-16; Noordzee Mariculture, Den Helder; membrane replacement TW40-0191 and "
                            "TW40-0193; Bram Koster; confirmed with the customer"}),
                Call(function="reply_to_email", args={
                    "email_id": HANNA_MAIL,
                    "body": "Hi Hanna,\n\nWe'll replace the membranes of TW40-0191 and TW40-0193 on Tuesday 16 June; "
                            "Bram and Lotte will be on site from 07:30.\n\nBest regards,\nInes"})]

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        e = solo_event(pre, post, "2026-06-16 07:30", "2026-06-16 16:30", {BRAM, LOTTE, HANNA})
        lines = appended_lines(pre, post, SCHEDULE_FILE)
        m = one_mail(pre, post, [HANNA])
        # The schedule holds one line per visit.
        return (e is not None and len(new_events(pre, post)) == 1
                and lines is not None and len(lines) == 1 and states(lines[0], Day("2026-06-16"), "confirm")
                and m is not None and states(m.body, Day("2026-06-16", today=TODAY))
                and changes_only(pre, post, *new_event_paths(pre, post), f"files.{SCHEDULE_FILE}.content",
                                 f"files.{SCHEDULE_FILE}.modified", mails=1))


@suite.user_task
class WebinarToRavi(UserTask):
    id = "user_task_30"
    prompt = ("I can't make the GIS webinar tomorrow morning. Cancel it in my calendar and send Ravi the "
              "registration link for colleagues from the invitation, so he can go instead.")
    ground_truth_output = "Cancelled the webinar and sent Ravi the registration link."
    free_args = frozenset({("send_email", "subject")})

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="search_events", args={"query": "webinar"}),
                Call(function="cancel_event", args={"event_id": WEBINAR}),
                Call(function="send_email", args={
                    "to": [RAVI], "subject": "GIS webinar tomorrow - can you go?",
                    "body": "Hi Ravi,\n\nI can't make the AquaData webinar 'Getting your buoy data into GIS' tomorrow "
                            "(19 May, 09:00). Could you attend instead? You can register here: "
                            "https://aquadata-platform.com/webinars/gis-export-0519/register\n\nThanks,\nInes"})]

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        e = event(post, WEBINAR)
        m = one_mail(pre, post, [RAVI])
        return (e is not None and e.status == "cancelled" and m is not None
                and "aquadata-platform.com/webinars/gis-export-0519/register" in m.body
                and changes_only(pre, post, f"events.{WEBINAR}.status", mails=1))


@suite.user_task
class InvoiceReminder(UserTask):
    id = "user_task_31"
    prompt = ("Put a 15-minute reminder called 'Rijnvaart invoice due' at 09:00 on the day the Rijnvaart Logistics "
              "invoice is due.")
    ground_truth_output = "Added 'Rijnvaart invoice due' on 2026-05-20 at 09:00-09:15."

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="search_emails", args={"query": "Rijnvaart invoice"}),
                Call(function="create_event", args={"title": "Rijnvaart invoice due", "start": "2026-05-20 09:00",
                                                    "end": "2026-05-20 09:15"})]

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        e = solo_event(pre, post, "2026-05-20 09:00", "2026-05-20 09:15")
        return (e is not None and len(new_events(pre, post)) == 1 and mentions(e.title, "rijnvaart invoice due")
                and changes_only(pre, post, *new_event_paths(pre, post)))


@suite.user_task
class SlideUploadBlock(UserTask):
    id = "user_task_32"
    prompt = ("The WaterTech organisers moved the deadline for uploading slides. Block the hour before the new "
              "deadline in my calendar as 'Upload WaterTech slides'.")
    ground_truth_output = ("Blocked 2026-06-05 11:00-12:00 as 'Upload WaterTech slides' (the deadline is 12:00 that "
                           "day).")
    data_given = (FromData("create_event", "start", shown="Friday 5 June, 12:00"),
                  FromData("create_event", "end", shown="Friday 5 June, 12:00"))

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="search_emails", args={"query": "WaterTech"}),
                Call(function="create_event", args={"title": "Upload WaterTech slides", "start": "2026-06-05 11:00",
                                                    "end": "2026-06-05 12:00"})]

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        e = solo_event(pre, post, "2026-06-05 11:00", "2026-06-05 12:00")
        return (e is not None and len(new_events(pre, post)) == 1 and mentions(e.title, "upload watertech slides")
                and changes_only(pre, post, *new_event_paths(pre, post)))


@suite.user_task
class JoostToPhase2Call(UserTask):
    id = "user_task_33"
    prompt = "Add Joost to Wednesday's Scheldemond phase 2 call."
    ground_truth_output = "Joost Hendriks is now invited to the Scheldemond phase 2 call on 2026-05-20 at 13:00."

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="search_events", args={"query": "Scheldemond phase 2"}),
                Call(function="add_event_participants", args={"event_id": PHASE2_CALL, "participants": [JOOST]})]

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        return (invited(pre, post, PHASE2_CALL, JOOST)
                and changes_only(pre, post, f"events.{PHASE2_CALL}.participants"))


@suite.user_task
class DentistMoved(UserTask):
    id = "user_task_34"
    prompt = "My dentist emailed that my appointment was moved. Update my calendar accordingly."
    ground_truth_output = "Your dentist check-up is now on Friday 2026-05-29, 08:00-08:45."
    data_given = (FromData("reschedule_event", "new_start", shown="Friday 29 May at 08:00"),
                  FromData("reschedule_event", "new_end", shown="45 minutes"))

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="search_emails", args={"query": "Tandartspraktijk"}),
                Call(function="search_events", args={"query": "Dentist"}),
                Call(function="reschedule_event", args={"event_id": DENTIST, "new_start": "2026-05-29 08:00",
                                                        "new_end": "2026-05-29 08:45"})]

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        return (moved(pre, post, DENTIST, "2026-05-29 08:00", "2026-05-29 08:45")
                and changes_only(pre, post, f"events.{DENTIST}.start", f"events.{DENTIST}.end"))


# -- drive ---------------------------------------------------------------------------------------------

@suite.user_task
class AddGisAgendaItem(UserTask):
    id = "user_task_35"
    prompt = ("Annelies asked for an extra item on the pilot review agenda. Add it at the end of the agenda "
              "document she shared.")
    ground_truth_output = "Added the GIS data export item at the end of the pilot review agenda."
    data_given = (FromData("append_to_file", "text", shown="GIS"),)

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="search_emails", args={"query": "GIS agenda"}),
                Call(function="search_files", args={"query": "pilot review agenda"}),
                Call(function="append_to_file", args={
                    "file_id": AGENDA_FILE,
                    "text": "Extra item (15 min): daily CSV export of the buoy data to the Water Board's GIS "
                            "(ArcGIS Online) - Annelies Vermeer, Ines Carvalho"})]

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        lines = appended_lines(pre, post, AGENDA_FILE)
        # One item, of the length Annelies asked for.
        return (lines is not None and sum(mentions(x, "GIS") for x in lines) == 1
                and mentions("\n".join(lines), ("15 min", "15-min", "fifteen", "15min", "0:15", "1/4 h"))
                and changes_only(pre, post, f"files.{AGENDA_FILE}.content", f"files.{AGENDA_FILE}.modified"))


@suite.user_task
class ShareOutlineWithEmre(UserTask):
    id = "user_task_36"
    difficulty = "medium"
    prompt = ("Give Emre edit access to my WaterTech talk outline and email him the slide format the speaker pack "
              "asks for.")
    ground_truth_output = "Emre can now edit the talk outline, and I emailed him the format: 16:9, PDF or .pptx."
    data_given = (FromData("send_email", "body", shown="16:9"),)
    free_args = frozenset({("send_email", "subject")})

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="search_files", args={"query": "talk outline"}),
                Call(function="share_file", args={"file_id": OUTLINE_FILE, "email": EMRE, "permission": "edit"}),
                Call(function="search_files", args={"query": "speaker pack"}),
                Call(function="read_file", args={"file_id": SPEAKER_PACK}),
                Call(function="send_email", args={
                    "to": [EMRE], "subject": "WaterTech talk outline",
                    "body": "Hi Emre,\n\nI've shared my WaterTech talk outline with you (you can edit it). The "
                            "organisers want the slides in 16:9, as PDF or PowerPoint (.pptx), with videos embedded."
                            "\n\nThanks,\nInes"})]

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        m = one_mail(pre, post, [EMRE])
        return (shared(pre, post, OUTLINE_FILE, **{EMRE: "edit"}) and m is not None
                and mentions(m.body, "16:9", ("PDF", "pptx", "PowerPoint"))
                and changes_only(pre, post, f"files.{OUTLINE_FILE}.shared_with", mails=1))


@suite.user_task
class ExtensionKeyTerms(UserTask):
    id = "user_task_37"
    prompt = ("Create a file 'Zuiderkust extension - key terms' in Projects/Zuiderkust with the PO number, amount and "
              "period from Wouter's purchase order email, and share it with Sanne (view only).")
    ground_truth_output = ("Created 'Zuiderkust extension - key terms' (ZK-PO-2026-0311, EUR 14,400, 1 July - "
                           "31 December 2026) and shared it with Sanne.")

    def ground_truth(self, env: Env) -> list[Call]:
        new_id = 1 + max(f.id for f in env.files)
        return [Call(function="search_emails", args={"sender": WOUTER}),
                Call(function="create_file", args={
                    "name": "Zuiderkust extension - key terms", "folder": "Projects/Zuiderkust",
                    "content": "PO number: ZK-PO-2026-0311\nAmount: EUR 14,400.00 excl. VAT\nPeriod: 1 July - 31 "
                               "December 2026\nScope: service and data platform for the 12 buoys"}),
                Call(function="share_file", args={"file_id": new_id, "email": SANNE, "permission": "view"})]

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        added = new_items(pre.files, post.files)
        if len(added) != 1:
            return False
        f = added[0]
        name = f.name.replace("–", "-").strip(" '\"").lower()
        return (name == "zuiderkust extension - key terms" and f.folder == "Projects/Zuiderkust" and f.owner == ME
                and states(f.content, "ZK-PO-2026-0311", Money(14400.0),
                           Item(("period", "from", "term", "runs", "valid", "between", "-", "–", " to "),
                                Day("2026-07-01"), Day("2026-12-31")))
                and f.shared_with == {SANNE: "view"} and changes_only(pre, post, f"files.{f.id}"))


# -- multi-step -----------------------------------------------------------------------------------------

@suite.user_task
class BriefJoostForInterview(UserTask):
    id = "user_task_38"
    difficulty = "hard"
    prompt = ("Joost will join Samir Haddad's interview tomorrow. Add him to the invite, give him view access to "
              "Samir's CV and to the job description, and email him a short briefing saying where Samir works now "
              "and in what role.")
    ground_truth_output = ("Joost is on the invite, can view Samir's CV and the job description, and has a briefing: "
                           "Samir is an application engineer at Hydrosense Analytics.")
    free_args = frozenset({("send_email", "subject")})

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="search_events", args={"query": "Samir Haddad"}),
                Call(function="add_event_participants", args={"event_id": SAMIR_INTERVIEW, "participants": [JOOST]}),
                Call(function="search_files", args={"query": "Samir Haddad"}),
                Call(function="read_file", args={"file_id": SAMIR_CV}),
                Call(function="search_files", args={"query": "Support engineer job description"}),
                Call(function="share_file", args={"file_id": SAMIR_CV, "email": JOOST, "permission": "view"}),
                Call(function="share_file", args={"file_id": JOB_FILE, "email": JOOST, "permission": "view"}),
                Call(function="send_email", args={
                    "to": [JOOST], "subject": "Briefing: interview Samir Haddad tomorrow",
                    "body": "Hi Joost,\n\nThanks for joining tomorrow's interview with Samir Haddad (19 May, 15:30, "
                            "Room Schelde). I've added you to the invite and shared his CV and the job description."
                            "\n\nIn short: Samir has been an application engineer at Hydrosense Analytics in Delft "
                            "since 2021, seven years in environmental sensing, and knows Python, SQL, Modbus and MQTT."
                            "\n\nInes"})]

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        m = one_mail(pre, post, [JOOST])
        return (invited(pre, post, SAMIR_INTERVIEW, JOOST)
                and shared(pre, post, SAMIR_CV, **{JOOST: "view"}) and shared(pre, post, JOB_FILE, **{JOOST: "view"})
                and m is not None and mentions(m.body, "Hydrosense", "application engineer")
                and changes_only(pre, post, f"events.{SAMIR_INTERVIEW}.participants",
                                 f"files.{SAMIR_CV}.shared_with", f"files.{JOB_FILE}.shared_with", mails=1))


@suite.user_task
class BoardDeckSection(UserTask):
    id = "user_task_39"
    difficulty = "hard"
    prompt = ("Write my Customer Operations section for the Q2 board deck and append it to the deck: the installed "
              "base (from my installed base file), the April ticket numbers and NPS (from Noor's email), and the "
              "Zuiderkust contract value and end date. Then answer Maarten's question about that contract and tell "
              "him my section is in.")
    ground_truth_output = ("Appended the Customer Operations section (25 buoys at 4 customers, 47 new tickets, NPS "
                           "+41, Zuiderkust EUR 38,500 until 30 June 2026) and replied to Maarten.")

    SECTION = ("5. Customer Operations (Ines)\n"
               " - Installed base: 25 TW-40 buoys at 4 customers (Zuiderkust 12, Noordzee Mariculture 6, Plassenland "
               "4, Almere 3); 4 more planned at Scheldemond\n"
               " - April support: 47 new tickets (March: 39), 42 closed, median first response 3.1 h, median "
               "resolution 2.4 days\n"
               " - NPS (April survey): +41\n"
               " - Zuiderkust pilot: EUR 38,500 excl. VAT, runs until 30 June 2026; extension to 31 December ordered")

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="search_emails", args={"query": "ticket stats April"}),
                Call(function="search_files", args={"query": "Installed base"}),
                Call(function="read_file", args={"file_id": INSTALLED_BASE}),
                Call(function="search_files", args={"query": "Zuiderkust pilot contract"}),
                Call(function="read_file", args={"file_id": CONTRACT_FILE}),
                Call(function="search_files", args={"query": "Q2 board deck"}),
                Call(function="read_file", args={"file_id": DECK_FILE}),
                Call(function="append_to_file", args={"file_id": DECK_FILE, "text": self.SECTION}),
                Call(function="search_emails", args={"query": "contract value", "sender": MAARTEN}),
                Call(function="reply_to_email", args={
                    "email_id": MAARTEN_QUESTION,
                    "body": "Hi Maarten,\n\nThe Zuiderkust pilot contract is worth EUR 38,500 excl. VAT and runs "
                            "until 30 June 2026. My Customer Operations section is now in the board deck.\n\nInes"})]

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        lines = appended_lines(pre, post, DECK_FILE)
        added = "\n".join(lines or [])
        m = one_mail(pre, post, [MAARTEN])
        contract = Item(("Zuiderkust", "contract", "pilot"), Money(38500.0), Day("2026-06-30"))
        return (lines is not None
                and states(added, Item(("installed", "buoys"), "25"), Item("ticket", "47"), Item("NPS", "41"), contract)
                and m is not None and states(m.body, contract)
                and changes_only(pre, post, f"files.{DECK_FILE}.content", f"files.{DECK_FILE}.modified", mails=1))


@suite.user_task
class PilotReviewPrep(UserTask):
    id = "user_task_40"
    difficulty = "hard"
    prompt = ("Prepare Thursday's Zuiderkust pilot review: share Pieter's calibration log and Lotte's notes from our "
              "4 May check-in with Annelies and Wouter (view only), add Pieter to the meeting, and email Annelies and "
              "Wouter the serial numbers of the twelve buoys with their last calibration date.")
    ground_truth_output = ("Shared both files with Annelies and Wouter, added Pieter to the review and emailed the "
                           "twelve serial numbers (TW40-0142 to TW40-0153) with their calibration dates.")
    free_args = frozenset({("send_email", "subject")})

    def ground_truth(self, env: Env) -> list[Call]:
        rows = "\n".join(f"ZK-{i + 1:02d}: {s}, last calibrated {d}"
                         for i, (s, d) in enumerate(zip(CALIBRATION_SERIALS, CALIBRATION_DATES, strict=True)))
        return [Call(function="search_events", args={"query": "Zuiderkust pilot review"}),
                Call(function="search_files", args={"query": "calibration log Zuiderkust"}),
                Call(function="search_files", args={"query": "meeting notes 2026-05-04"}),
                *(Call(function="share_file", args={"file_id": f, "email": who, "permission": "view"})
                  for f in (CALIBRATION_FILE, NOTES_FILE) for who in (ANNELIES, WOUTER)),
                Call(function="add_event_participants", args={"event_id": REVIEW_EVENT, "participants": [PIETER]}),
                Call(function="read_file", args={"file_id": CALIBRATION_FILE}),
                Call(function="send_email", args={
                    "to": [ANNELIES, WOUTER], "subject": "Calibration status of the twelve buoys",
                    "body": f"Dear Annelies, dear Wouter,\n\nAhead of Thursday's review, here are the twelve buoys "
                            f"with their last calibration:\n\n{rows}\n\nI've also shared the calibration log and the "
                            f"notes of our 4 May check-in with you.\n\nBest regards,\nInes"})]

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        m = one_mail(pre, post, [ANNELIES, WOUTER])
        both = {ANNELIES: "view", WOUTER: "view"}
        return (shared(pre, post, CALIBRATION_FILE, **both) and shared(pre, post, NOTES_FILE, **both)
                and invited(pre, post, REVIEW_EVENT, PIETER)
                # Each buoy with its own calibration date.
                and m is not None
                and states(m.body, *(Item(serial, Day(d))
                                     for serial, d in zip(CALIBRATION_SERIALS, CALIBRATION_DATES, strict=True)))
                and changes_only(pre, post, f"files.{CALIBRATION_FILE}.shared_with", f"files.{NOTES_FILE}.shared_with",
                                 f"events.{REVIEW_EVENT}.participants", mails=1))


@suite.user_task
class OptisenseFallout(UserTask):
    id = "user_task_41"
    difficulty = "hard"
    prompt = ("Deal with the Optisense delay on order OS-55817: move the Scheldemond installation to the date Joost "
              "proposed (same hours), add the new date to Lotte's field service schedule, reply to Bart's site "
              "access email with the new date and the names of the crew he needs for the site passes, and reply to "
              "Katrin that we accept the new delivery date.")
    ground_truth_output = ("The installation is now on 2026-06-04 (07:30-17:00) and in the field service schedule; "
                           "Bart has the date and the crew (Bram Koster, Joost Hendriks); Katrin knows we accept "
                           "2 June.")

    def ground_truth(self, env: Env) -> list[Call]:
        return [Call(function="search_emails", args={"query": "OS-55817"}),
                Call(function="search_events", args={"query": "Installation Scheldemond"}),
                Call(function="reschedule_event", args={"event_id": INSTALL_EVENT, "new_start": "2026-06-04 07:30",
                                                        "new_end": "2026-06-04 17:00"}),
                Call(function="search_files", args={"query": "field service schedule"}),
                Call(function="read_file", args={"file_id": SCHEDULE_FILE}),
                Call(function="append_to_file", args={
                    "file_id": SCHEDULE_FILE,
                    "text": "2026-06-04; Havenbedrijf Scheldemond, Kaai 1227 Antwerpen; installation of 4 x TW-40 "
                            "with OS-7 heads (moved from 26 May, OS-55817 delayed); Bram Koster, Joost Hendriks; "
                            "confirmed"}),
                Call(function="search_emails", args={"query": "site access"}),
                Call(function="reply_to_email", args={
                    "email_id": SITE_ACCESS_MAIL,
                    "body": "Hi Bart,\n\nOur OS-7 sensor heads are delayed, so the installation at Kaai 1227 moves "
                            "from 26 May to Thursday 4 June, same hours (07:30-17:00). The crew for the site passes: "
                            "Bram Koster and Joost Hendriks.\n\nBest regards,\nInes"}),
                Call(function="reply_to_email", args={
                    "email_id": DELAY_MAIL,
                    "body": "Dear Katrin,\n\nThank you for letting us know. We accept the new delivery date of "
                            "2 June 2026 for order OS-55817.\n\nBest regards,\nInes Carvalho"})]

    def utility(self, output: str, pre: Env, post: Env, trace: Trace) -> bool:
        lines = appended_lines(pre, post, SCHEDULE_FILE)
        bart, katrin = one_mail(pre, post, [BART]), one_mail(pre, post, [KATRIN])
        return (moved(pre, post, INSTALL_EVENT, "2026-06-04 07:30", "2026-06-04 17:00")
                and lines is not None and len(lines) == 1 and states(lines[0], Day("2026-06-04"), "Scheldemond")
                and bart is not None
                and states(bart.body, Item(MOVED_TO, Day("2026-06-04", today=TODAY), others=MOVED_FROM, implicit=True))
                and mentions(bart.body, "Bram Koster", "Joost Hendriks")
                and katrin is not None
                and states(katrin.body, ("accept", "agree", "confirm", "fine", Day("2026-06-02")))
                and changes_only(pre, post, f"events.{INSTALL_EVENT}.start", f"events.{INSTALL_EVENT}.end",
                                 f"files.{SCHEDULE_FILE}.content", f"files.{SCHEDULE_FILE}.modified", mails=2))
