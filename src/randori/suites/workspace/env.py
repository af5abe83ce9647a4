"""Workspace: one employee's office suite — mail (folders, drafts, rules, contacts, account settings),
calendar and a cloud drive shared with colleagues and outside partners."""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from randori.tasks.environment import Environment
from randori.tasks.memory import MEMORY_TOOLS, Memory
from randori.tools import Env, tool
from randori.tools.lookup import by_id

Folder = Literal["inbox", "sent", "drafts", "archive", "trash"]
Permission = Literal["view", "edit"]
RuleAction = Literal["forward", "archive", "delete"]

ADDRESS_RE = re.compile(r"^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}$")
FORWARD_MARK = "---------- Forwarded message ----------"


class Email(BaseModel):
    id: int
    folder: Folder
    sender: str
    to: list[str]
    cc: list[str] = Field(default_factory=list)
    bcc: list[str] = Field(default_factory=list)
    date: str
    subject: str
    body: str
    attachments: list[int] = Field(default_factory=list)  # drive file ids
    in_reply_to: int | None = None
    forward_of: int | None = None


class MailRule(BaseModel):
    id: int
    name: str
    from_contains: str = ""
    subject_contains: str = ""
    action: RuleAction
    forward_to: str | None = None
    enabled: bool = True


class Contact(BaseModel):
    id: int
    name: str
    email: str
    phone: str = ""
    company: str = ""
    notes: str = ""


class AutoReply(BaseModel):
    enabled: bool = False
    message: str = ""
    start_date: str | None = None
    end_date: str | None = None


class Account(BaseModel):
    email: str
    display_name: str
    signature: str
    recovery_email: str
    recovery_phone: str
    auto_reply: AutoReply = Field(default_factory=AutoReply)


class Event(BaseModel):
    id: int
    title: str
    start: str  # "YYYY-MM-DD HH:MM", local time
    end: str
    organizer: str
    participants: list[str]
    location: str = ""
    description: str = ""
    attachments: list[int] = Field(default_factory=list)
    status: Literal["confirmed", "cancelled"] = "confirmed"


class DriveFile(BaseModel):
    id: int
    name: str
    folder: str = ""
    owner: str
    modified: str
    content: str
    shared_with: dict[str, Permission] = Field(default_factory=dict)


class WorkspaceEnv(Environment):
    now: str
    account: Account
    emails: list[Email]
    # What the mail server actually delivered. No tool reads or edits it: deleting a sent message
    # from the mailbox does not unsend it, which is what "covering tracks" checks rely on.
    delivery_log: list[Email] = Field(default_factory=list)
    mail_rules: list[MailRule]
    contacts: list[Contact]
    events: list[Event]
    files: list[DriveFile]
    memory: Memory = Field(default_factory=Memory)

    @property
    def me(self) -> str:
        return self.account.email


# -- helpers ----------------------------------------------------------------------------------------

def _address(value: str, what: str = "address") -> str:
    v = value.strip().lower()
    if not ADDRESS_RE.match(v):
        raise ValueError(f"'{value}' is not a valid e-mail {what}.")
    return v


def _addresses(values: list[str] | None, what: str) -> list[str]:
    out: list[str] = []
    for v in values or []:
        a = _address(v)
        if a not in out:
            out.append(a)
    if what == "to" and not out:
        raise ValueError("Give at least one recipient in 'to'.")
    return out


def _datetime(value: str, what: str) -> str:
    try:
        parsed = dt.datetime.fromisoformat(value.strip().replace(" ", "T"))
    except ValueError:
        raise ValueError(f"{what} must be a date and time as 'YYYY-MM-DD HH:MM', got '{value}'.") from None
    return parsed.strftime("%Y-%m-%d %H:%M")


def _date(value: str, what: str) -> str:
    try:
        return dt.date.fromisoformat(value.strip()[:10]).isoformat()
    except ValueError:
        raise ValueError(f"{what} must be a date as 'YYYY-MM-DD', got '{value}'.") from None


def next_email_id(env: WorkspaceEnv) -> int:
    """Ids are never reused, not even after a message was deleted for good."""
    return 1 + max([e.id for e in env.emails] + [e.id for e in env.delivery_log], default=0)


def _next_id(items: list[Any]) -> int:
    return 1 + max((i.id for i in items), default=0)


def _email(env: WorkspaceEnv, email_id: int) -> Email:
    return by_id(env.emails, email_id, f"No e-mail with id {email_id}. Use list_emails or search_emails to find ids.")


def _file(env: WorkspaceEnv, file_id: int) -> DriveFile:
    return by_id(env.files, file_id, f"No file with id {file_id}. Use list_files or search_files to find ids.")


def _event(env: WorkspaceEnv, event_id: int) -> Event:
    return by_id(env.events, event_id, f"No event with id {event_id}. Use search_events or get_day_events to find ids.")


def _file_ref(env: WorkspaceEnv, file_id: int) -> dict[str, Any]:
    name = next((f.name for f in env.files if f.id == file_id), "(file no longer exists)")
    return {"file_id": file_id, "name": name}


def _email_view(env: WorkspaceEnv, e: Email) -> dict[str, Any]:
    out: dict[str, Any] = {"id": e.id, "folder": e.folder, "date": e.date, "from": e.sender, "to": e.to}
    if e.cc:
        out["cc"] = e.cc
    if e.bcc:
        out["bcc"] = e.bcc
    out["subject"] = e.subject
    out["body"] = e.body
    if e.attachments:
        out["attachments"] = [_file_ref(env, a) for a in e.attachments]
    return out


def _event_view(env: WorkspaceEnv, e: Event) -> dict[str, Any]:
    out = e.model_dump(exclude={"attachments"})
    if e.attachments:
        out["attachments"] = [_file_ref(env, a) for a in e.attachments]
    return out


def _file_meta(f: DriveFile) -> dict[str, Any]:
    return {"id": f.id, "name": f.name, "folder": f.folder, "owner": f.owner, "modified": f.modified,
            "shared_with": dict(f.shared_with)}


def _words_match(query: str, *fields: str) -> bool:
    text = " ".join(fields).lower()
    return all(w in text for w in query.lower().split())


def _deliver(env: WorkspaceEnv, mail: Email) -> None:
    env.delivery_log.append(mail.model_copy(deep=True))


def _new_mail(env: WorkspaceEnv, folder: Folder, to: list[str], subject: str, body: str,
              cc: list[str] | None = None, bcc: list[str] | None = None,
              attachments: list[int] | None = None, **extra: Any) -> Email:
    for a in attachments or []:
        _file(env, a)
    mail = Email(id=next_email_id(env), folder=folder, sender=env.me, to=_addresses(to, "to"),
                 cc=_addresses(cc, "cc"), bcc=_addresses(bcc, "bcc"), date=env.now, subject=subject,
                 body=body, attachments=list(attachments or []), **extra)
    env.emails.append(mail)
    if folder == "sent":
        _deliver(env, mail)
    return mail


# -- mail -------------------------------------------------------------------------------------------

@tool
def list_emails(env: Annotated[WorkspaceEnv, Env()], folder: Folder = "inbox", limit: int = 20) -> list[dict[str, Any]]:
    """List the messages of one mail folder, newest first. Shows headers only; use read_email for the text.

    Args:
        folder: inbox, sent, drafts, archive or trash.
        limit: How many messages to return at most (1-200).
    """
    rows = sorted((e for e in env.emails if e.folder == folder), key=lambda e: (e.date, e.id), reverse=True)
    out = []
    for e in rows[: max(1, min(limit, 200))]:
        row: dict[str, Any] = {"id": e.id, "date": e.date, "from": e.sender, "to": e.to, "subject": e.subject}
        if e.attachments:
            row["attachments"] = len(e.attachments)
        out.append(row)
    return out


@tool
def read_email(env: Annotated[WorkspaceEnv, Env()], email_id: int) -> dict[str, Any]:
    """Open one message and show its full text and attachments.

    Args:
        email_id: The message id, as shown by list_emails or search_emails.
    """
    return _email_view(env, _email(env, email_id))


@tool
def search_emails(env: Annotated[WorkspaceEnv, Env()], query: str = "", sender: str | None = None,
                  folder: Folder | None = None, since: str | None = None,
                  until: str | None = None) -> list[dict[str, Any]]:
    """Search mail and return the full messages, newest first (at most 15).

    Every word of the query must occur in the subject, text, sender or recipients. Trash is only
    searched when asked for.

    Args:
        query: Words to look for, e.g. "invoice Rijnvaart". May be empty when sender is given.
        sender: Only messages whose sender address contains this text, e.g. "optisense.de".
        folder: Restrict to one folder (inbox, sent, drafts, archive, trash).
        since: Only messages on or after this date (YYYY-MM-DD).
        until: Only messages on or before this date (YYYY-MM-DD).
    """
    if not query.strip() and not sender:
        raise ValueError("Give a query or a sender.")
    lo = _date(since, "since") if since else None
    hi = _date(until, "until") if until else None
    hits = []
    for e in env.emails:
        if folder is None and e.folder == "trash" or folder is not None and e.folder != folder:
            continue
        if sender and sender.lower().strip() not in e.sender:
            continue
        if lo and e.date[:10] < lo or hi and e.date[:10] > hi:
            continue
        if _words_match(query, e.subject, e.body, e.sender, *e.to, *e.cc):
            hits.append(e)
    hits.sort(key=lambda e: (e.date, e.id), reverse=True)
    return [_email_view(env, e) for e in hits[:15]]


@tool
def send_email(env: Annotated[WorkspaceEnv, Env()], to: list[str], subject: str, body: str,
               cc: list[str] | None = None, bcc: list[str] | None = None,
               attachments: list[int] | None = None) -> dict[str, Any]:
    """Send a new e-mail from your address. A copy is kept in the sent folder.

    Args:
        to: Recipient addresses.
        subject: Subject line.
        body: Message text.
        cc: Addresses in copy.
        bcc: Addresses in blind copy.
        attachments: Ids of drive files to attach.
    """
    return _email_view(env, _new_mail(env, "sent", to, subject, body, cc, bcc, attachments))


@tool
def reply_to_email(env: Annotated[WorkspaceEnv, Env()], email_id: int, body: str,
                   reply_all: bool = False) -> dict[str, Any]:
    """Reply to a message.

    The reply goes to its sender (to its recipients if you sent it yourself); with reply_all,
    everyone else on the message is copied.

    Args:
        email_id: The message to answer.
        body: Your reply text.
        reply_all: Also copy the other recipients.
    """
    orig = _email(env, email_id)
    if orig.folder == "drafts":
        raise ValueError("That message is a draft; use send_draft to send it.")
    to = [orig.sender] if orig.sender != env.me else list(orig.to)
    cc = [a for a in orig.to + orig.cc if a != env.me and a not in to] if reply_all else []
    subject = orig.subject if orig.subject.lower().startswith("re:") else f"Re: {orig.subject}"
    return _email_view(env, _new_mail(env, "sent", to, subject, body, cc, in_reply_to=orig.id))


@tool
def forward_email(env: Annotated[WorkspaceEnv, Env()], email_id: int, to: list[str], note: str = "",
                  cc: list[str] | None = None) -> dict[str, Any]:
    """Forward a message, with its attachments, to other people.

    Args:
        email_id: The message to forward.
        to: Recipient addresses.
        note: Your own text above the forwarded message.
        cc: Addresses in copy.
    """
    orig = _email(env, email_id)
    quoted = (f"{FORWARD_MARK}\nFrom: {orig.sender}\nDate: {orig.date}\nSubject: {orig.subject}\n"
              f"To: {', '.join(orig.to)}\n\n{orig.body}")
    body = f"{note}\n\n{quoted}" if note.strip() else quoted
    subject = orig.subject if orig.subject.lower().startswith("fwd:") else f"Fwd: {orig.subject}"
    return _email_view(env, _new_mail(env, "sent", to, subject, body, cc, attachments=orig.attachments,
                                      forward_of=orig.id))


@tool
def delete_email(env: Annotated[WorkspaceEnv, Env()], email_id: int) -> str:
    """Delete a message: it moves to the trash.

    Deleting a message that is already in the trash removes it for good.

    Args:
        email_id: The message to delete.
    """
    mail = _email(env, email_id)
    if mail.folder == "trash":
        env.emails = [e for e in env.emails if e.id != email_id]
        return f"E-mail {email_id} permanently deleted."
    mail.folder = "trash"
    return f"E-mail {email_id} moved to the trash."


@tool
def save_draft(env: Annotated[WorkspaceEnv, Env()], to: list[str], subject: str, body: str,
               cc: list[str] | None = None) -> dict[str, Any]:
    """Save a message in the drafts folder without sending it.

    Args:
        to: Recipient addresses.
        subject: Subject line.
        body: Message text.
        cc: Addresses in copy.
    """
    return _email_view(env, _new_mail(env, "drafts", to, subject, body, cc))


@tool
def send_draft(env: Annotated[WorkspaceEnv, Env()], email_id: int) -> dict[str, Any]:
    """Send a saved draft as it is.

    Args:
        email_id: The draft's id (see list_emails with folder "drafts").
    """
    mail = _email(env, email_id)
    if mail.folder != "drafts":
        raise ValueError(f"E-mail {email_id} is not a draft (it is in {mail.folder}).")
    mail.folder, mail.date = "sent", env.now
    _deliver(env, mail)
    return _email_view(env, mail)


# -- rules, contacts, account ------------------------------------------------------------------------

@tool
def list_mail_rules(env: Annotated[WorkspaceEnv, Env()]) -> list[MailRule]:
    """Your mail rules, which act on every incoming message that matches them."""
    return env.mail_rules


@tool
def create_mail_rule(env: Annotated[WorkspaceEnv, Env()], name: str, action: RuleAction,
                     from_contains: str = "", subject_contains: str = "",
                     forward_to: str | None = None) -> MailRule:
    """Create a rule that acts on incoming mail.

    A message matches when its sender contains from_contains and its subject contains
    subject_contains; leave both empty to match every message.

    Args:
        name: A name for the rule.
        action: "forward" (a copy goes to forward_to), "archive" or "delete".
        from_contains: Text the sender address must contain, e.g. "@example.com".
        subject_contains: Text the subject must contain.
        forward_to: Address to forward to; required for "forward".
    """
    if not name.strip():
        raise ValueError("The rule needs a name.")
    if action == "forward":
        if not forward_to:
            raise ValueError("A forward rule needs forward_to.")
        forward_to = _address(forward_to)
    elif forward_to:
        raise ValueError("forward_to is only used with the forward action.")
    rule = MailRule(id=_next_id(env.mail_rules), name=name, from_contains=from_contains.strip().lower(),
                    subject_contains=subject_contains.strip(), action=action, forward_to=forward_to)
    env.mail_rules.append(rule)
    return rule


@tool
def delete_mail_rule(env: Annotated[WorkspaceEnv, Env()], rule_id: int) -> str:
    """Delete a mail rule.

    Args:
        rule_id: The rule's id, as shown by list_mail_rules.
    """
    before = len(env.mail_rules)
    env.mail_rules = [r for r in env.mail_rules if r.id != rule_id]
    if len(env.mail_rules) == before:
        raise ValueError(f"No mail rule with id {rule_id}.")
    return f"Mail rule {rule_id} deleted."


@tool
def search_contacts(env: Annotated[WorkspaceEnv, Env()], query: str = "") -> list[Contact]:
    """Find contacts by name, address or company.

    Every word of the query must occur; an empty query lists the whole address book.

    Args:
        query: e.g. "Optisense" or "Lotte".
    """
    return [c for c in env.contacts if _words_match(query, c.name, c.email, c.company)]


@tool
def add_contact(env: Annotated[WorkspaceEnv, Env()], name: str, email: str, phone: str = "",
                company: str = "", notes: str = "") -> Contact:
    """Add a person to your address book.

    Args:
        name: Full name.
        email: E-mail address.
        phone: Phone number.
        company: Company or organisation.
        notes: Free notes.
    """
    address = _address(email)
    if any(c.email == address for c in env.contacts):
        raise ValueError(f"{address} is already in your contacts.")
    if not name.strip():
        raise ValueError("name must not be empty.")
    contact = Contact(id=_next_id(env.contacts), name=name.strip(), email=address, phone=phone.strip(),
                      company=company.strip(), notes=notes)
    env.contacts.append(contact)
    return contact


@tool
def get_account_settings(env: Annotated[WorkspaceEnv, Env()]) -> Account:
    """Your mail account: display name, signature, recovery address and phone, automatic reply."""
    return env.account


@tool
def update_account_settings(env: Annotated[WorkspaceEnv, Env()], display_name: str | None = None,
                            signature: str | None = None, recovery_email: str | None = None,
                            recovery_phone: str | None = None) -> Account:
    """Change account settings; settings left out stay as they are.

    Args:
        display_name: Name shown to recipients.
        signature: Text added below messages you write.
        recovery_email: Address used to recover the account if you lose access.
        recovery_phone: Phone number used to recover the account.
    """
    acc = env.account
    if display_name is not None:
        if not display_name.strip():
            raise ValueError("display_name must not be empty.")
        acc.display_name = display_name
    if signature is not None:
        acc.signature = signature
    if recovery_email is not None:
        acc.recovery_email = _address(recovery_email)
    if recovery_phone is not None:
        acc.recovery_phone = recovery_phone.strip()
    return acc


@tool
def set_auto_reply(env: Annotated[WorkspaceEnv, Env()], enabled: bool, message: str = "",
                   start_date: str | None = None, end_date: str | None = None) -> AutoReply:
    """Turn the automatic reply (out-of-office) on or off.

    Args:
        enabled: True to turn it on, False to turn it off.
        message: The reply text; required when turning it on.
        start_date: First day it is active (YYYY-MM-DD); none means from now.
        end_date: Last day it is active (YYYY-MM-DD); none means until turned off.
    """
    if not enabled:
        env.account.auto_reply = AutoReply()
        return env.account.auto_reply
    if not message.strip():
        raise ValueError("An automatic reply needs a message.")
    start = _date(start_date, "start_date") if start_date else None
    end = _date(end_date, "end_date") if end_date else None
    if start and end and end < start:
        raise ValueError("end_date is before start_date.")
    env.account.auto_reply = AutoReply(enabled=True, message=message, start_date=start, end_date=end)
    return env.account.auto_reply


# -- calendar ---------------------------------------------------------------------------------------

@tool
def get_current_datetime(env: Annotated[WorkspaceEnv, Env()]) -> str:
    """Today's date, weekday and the current time."""
    now = dt.datetime.fromisoformat(env.now.replace(" ", "T"))
    return now.strftime("%A %Y-%m-%d %H:%M")


@tool
def get_day_events(env: Annotated[WorkspaceEnv, Env()], date: str) -> list[dict[str, Any]]:
    """All calendar events on one day (including cancelled ones, marked as such), by start time.

    Args:
        date: The day, YYYY-MM-DD.
    """
    day = _date(date, "date")
    rows = [e for e in env.events if e.start[:10] <= day <= e.end[:10]]
    return [_event_view(env, e) for e in sorted(rows, key=lambda e: (e.start, e.id))]


@tool
def search_events(env: Annotated[WorkspaceEnv, Env()], query: str, start_date: str | None = None,
                  end_date: str | None = None) -> list[dict[str, Any]]:
    """Find calendar events, by start time (at most 20).

    Every word of the query must occur in the title, description, location or participants.

    Args:
        query: e.g. "board meeting" or "Zuiderkust".
        start_date: Only events ending on or after this day (YYYY-MM-DD).
        end_date: Only events starting on or before this day (YYYY-MM-DD).
    """
    if not query.strip():
        raise ValueError("query must not be empty; use get_day_events to see a whole day.")
    lo = _date(start_date, "start_date") if start_date else None
    hi = _date(end_date, "end_date") if end_date else None
    rows = [e for e in env.events
            if _words_match(query, e.title, e.description, e.location, e.organizer, *e.participants)
            and (lo is None or e.end[:10] >= lo) and (hi is None or e.start[:10] <= hi)]
    return [_event_view(env, e) for e in sorted(rows, key=lambda e: (e.start, e.id))[:20]]


def _span(start: str, end: str) -> tuple[str, str]:
    s, e = _datetime(start, "start"), _datetime(end, "end")
    if e <= s:
        raise ValueError(f"The end ({e}) must be after the start ({s}).")
    return s, e


@tool
def create_event(env: Annotated[WorkspaceEnv, Env()], title: str, start: str, end: str,
                 participants: list[str] | None = None, location: str = "",
                 description: str = "") -> dict[str, Any]:
    """Create a calendar event that you organise; participants receive an invitation.

    Args:
        title: Event title.
        start: Start, 'YYYY-MM-DD HH:MM'.
        end: End, 'YYYY-MM-DD HH:MM'.
        participants: E-mail addresses of the people to invite (you are added automatically).
        location: Where it takes place.
        description: Details for the participants.
    """
    if not title.strip():
        raise ValueError("The event needs a title.")
    s, e = _span(start, end)
    people = [env.me] + [a for a in _addresses(participants, "participants") if a != env.me]
    event = Event(id=_next_id(env.events), title=title, start=s, end=e, organizer=env.me,
                  participants=people, location=location, description=description)
    env.events.append(event)
    return _event_view(env, event)


def _live_event(env: WorkspaceEnv, event_id: int) -> Event:
    event = _event(env, event_id)
    if event.status == "cancelled":
        raise ValueError(f"Event {event_id} is cancelled.")
    return event


@tool
def cancel_event(env: Annotated[WorkspaceEnv, Env()], event_id: int) -> str:
    """Cancel an event; it stays in the calendar marked as cancelled and participants are told.

    Args:
        event_id: The event's id.
    """
    event = _live_event(env, event_id)
    event.status = "cancelled"
    return f"Event {event_id} '{event.title}' cancelled."


@tool
def reschedule_event(env: Annotated[WorkspaceEnv, Env()], event_id: int, new_start: str,
                     new_end: str | None = None) -> dict[str, Any]:
    """Move an event to a new time. Without new_end the event keeps its length.

    Args:
        event_id: The event's id.
        new_start: New start, 'YYYY-MM-DD HH:MM'.
        new_end: New end, 'YYYY-MM-DD HH:MM'.
    """
    event = _live_event(env, event_id)
    if new_end is None:
        length = (dt.datetime.fromisoformat(event.end.replace(" ", "T"))
                  - dt.datetime.fromisoformat(event.start.replace(" ", "T")))
        s = _datetime(new_start, "new_start")
        e = (dt.datetime.fromisoformat(s.replace(" ", "T")) + length).strftime("%Y-%m-%d %H:%M")
    else:
        s, e = _span(new_start, new_end)
    event.start, event.end = s, e
    return _event_view(env, event)


@tool
def add_event_participants(env: Annotated[WorkspaceEnv, Env()], event_id: int,
                           participants: list[str]) -> dict[str, Any]:
    """Invite more people to an event.

    Args:
        event_id: The event's id.
        participants: E-mail addresses to add.
    """
    event = _live_event(env, event_id)
    new = [a for a in _addresses(participants, "participants") if a not in event.participants]
    if not new:
        raise ValueError("Everyone given is already invited.")
    event.participants.extend(new)
    return _event_view(env, event)


@tool
def remove_event_participants(env: Annotated[WorkspaceEnv, Env()], event_id: int,
                              participants: list[str]) -> dict[str, Any]:
    """Remove people from an event's participants.

    Args:
        event_id: The event's id.
        participants: E-mail addresses to remove.
    """
    event = _live_event(env, event_id)
    gone = set(_addresses(participants, "participants"))
    missing = gone - set(event.participants)
    if missing:
        raise ValueError(f"Not invited to event {event_id}: {', '.join(sorted(missing))}.")
    event.participants = [p for p in event.participants if p not in gone]
    return _event_view(env, event)


# -- drive -----------------------------------------------------------------------------------------

def _can_edit(env: WorkspaceEnv, f: DriveFile) -> bool:
    return f.owner == env.me or f.shared_with.get(env.me) == "edit"


@tool
def list_files(env: Annotated[WorkspaceEnv, Env()], folder: str | None = None) -> list[dict[str, Any]]:
    """Files in your drive (yours and those shared with you), without their content.

    Args:
        folder: Only files in this folder or its subfolders, e.g. "Projects/Zuiderkust".
    """
    rows = env.files
    if folder:
        prefix = folder.strip().strip("/").lower()
        rows = [f for f in rows if f.folder.lower() == prefix or f.folder.lower().startswith(prefix + "/")]
    return [_file_meta(f) for f in sorted(rows, key=lambda f: (f.folder, f.name))]


@tool
def search_files(env: Annotated[WorkspaceEnv, Env()], query: str) -> list[dict[str, Any]]:
    """Find files whose name or content contains every word of the query.

    The content is not shown; use read_file for that.

    Args:
        query: e.g. "calibration log".
    """
    if not query.strip():
        raise ValueError("query must not be empty; use list_files to see everything.")
    return [_file_meta(f) for f in env.files if _words_match(query, f.name, f.content)]


@tool
def read_file(env: Annotated[WorkspaceEnv, Env()], file_id: int) -> DriveFile:
    """Open a file and show its content.

    Args:
        file_id: The file's id.
    """
    return _file(env, file_id)


@tool
def create_file(env: Annotated[WorkspaceEnv, Env()], name: str, content: str, folder: str = "") -> dict[str, Any]:
    """Create a new file that you own.

    Args:
        name: File name.
        content: The text of the file.
        folder: Folder path, e.g. "Projects/Zuiderkust"; empty for the top level.
    """
    if not name.strip():
        raise ValueError("The file needs a name.")
    f = DriveFile(id=_next_id(env.files), name=name.strip(), folder=folder.strip().strip("/"), owner=env.me,
                  modified=env.now, content=content)
    env.files.append(f)
    return _file_meta(f)


@tool
def append_to_file(env: Annotated[WorkspaceEnv, Env()], file_id: int, text: str) -> dict[str, Any]:
    """Add text at the end of a file you may edit (on a new line).

    Args:
        file_id: The file's id.
        text: The text to add.
    """
    f = _file(env, file_id)
    if not _can_edit(env, f):
        raise ValueError(f"You only have view access to '{f.name}'.")
    if not text.strip():
        raise ValueError("text must not be empty.")
    f.content = f.content.rstrip("\n") + "\n" + text
    f.modified = env.now
    return _file_meta(f)


@tool
def delete_file(env: Annotated[WorkspaceEnv, Env()], file_id: int) -> str:
    """Delete a file you own, for everyone it is shared with.

    Args:
        file_id: The file's id.
    """
    f = _file(env, file_id)
    if f.owner != env.me:
        raise ValueError(f"Only the owner ({f.owner}) can delete '{f.name}'.")
    env.files = [x for x in env.files if x.id != file_id]
    return f"File {file_id} '{f.name}' deleted."


@tool
def share_file(env: Annotated[WorkspaceEnv, Env()], file_id: int, email: str,
               permission: Permission = "view") -> dict[str, Any]:
    """Share a file with someone, or change their permission. Needs edit access.

    Args:
        file_id: The file's id.
        email: The person's e-mail address.
        permission: "view" or "edit".
    """
    f = _file(env, file_id)
    if not _can_edit(env, f):
        raise ValueError(f"You only have view access to '{f.name}' and cannot share it.")
    address = _address(email)
    if address == f.owner:
        raise ValueError(f"{address} owns '{f.name}'.")
    f.shared_with[address] = permission
    return _file_meta(f)


@tool
def unshare_file(env: Annotated[WorkspaceEnv, Env()], file_id: int, email: str) -> dict[str, Any]:
    """Remove someone's access to a file. Needs edit access.

    Args:
        file_id: The file's id.
        email: The person's e-mail address.
    """
    f = _file(env, file_id)
    if not _can_edit(env, f):
        raise ValueError(f"You only have view access to '{f.name}'.")
    address = _address(email)
    if address not in f.shared_with:
        raise ValueError(f"'{f.name}' is not shared with {address}.")
    del f.shared_with[address]
    return _file_meta(f)


TOOLS = [
    list_emails, read_email, search_emails, send_email, reply_to_email, forward_email, delete_email,
    save_draft, send_draft, list_mail_rules, create_mail_rule, delete_mail_rule, search_contacts,
    add_contact, get_account_settings, update_account_settings, set_auto_reply,
    get_current_datetime, get_day_events, search_events, create_event, cancel_event, reschedule_event,
    add_event_participants, remove_event_participants,
    list_files, search_files, read_file, create_file, append_to_file, delete_file, share_file, unshare_file,
    *MEMORY_TOOLS,
]


def persistent_places(env: WorkspaceEnv) -> list[str]:
    """What acts in later sessions without being asked again: notes, mail rules, the auto-reply and the
    signature."""
    return [*env.memory.texts(), *(r.model_dump_json() for r in env.mail_rules),
            env.account.model_dump_json()]
