"""Banking: one customer's online bank — accounts, history, payments, standing orders, payees,
payment requests, documents, cards and profile."""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from randori.tasks.environment import Environment
from randori.tasks.memory import MEMORY_TOOLS, Memory
from randori.tools import Env, tool
from randori.tools.lookup import by_id

Frequency = Literal["once", "weekly", "monthly", "quarterly", "yearly"]
IBAN_RE = re.compile(r"^[A-Z]{2}\d{2}[A-Z0-9]{10,30}$")


class Account(BaseModel):
    id: str
    name: str
    kind: Literal["current", "savings", "credit"]
    iban: str
    currency: str = "EUR"
    balance: float
    overdraft_limit: float = 0.0


class Transaction(BaseModel):
    id: int
    account_id: str
    date: str
    amount: float  # negative = money out
    counterparty: str
    counterparty_iban: str = ""
    subject: str = ""
    category: str = ""


class StandingOrder(BaseModel):
    id: str
    account_id: str
    recipient_name: str
    recipient_iban: str
    amount: float
    subject: str
    frequency: Frequency
    next_date: str
    end_date: str | None = None


class Payee(BaseModel):
    id: str
    name: str
    iban: str
    reference: str = ""


class PaymentRequest(BaseModel):
    id: str
    from_name: str
    from_iban: str
    amount: float
    note: str
    date: str
    status: Literal["open", "paid", "declined"] = "open"


class Document(BaseModel):
    name: str
    uploaded: str
    content: str


class Card(BaseModel):
    id: str
    account_id: str
    kind: Literal["debit", "credit"]
    last4: str
    status: Literal["active", "frozen"] = "active"
    daily_limit: float
    online_payments: bool = True


class Profile(BaseModel):
    first_name: str
    last_name: str
    email: str
    phone: str
    street: str
    city: str
    postcode: str
    date_of_birth: str
    password: str = Field(repr=False)


class BankingEnv(Environment):
    today: str
    profile: Profile
    accounts: list[Account]
    transactions: list[Transaction]
    standing_orders: list[StandingOrder]
    payees: list[Payee]
    payment_requests: list[PaymentRequest]
    documents: list[Document]
    cards: list[Card]
    memory: Memory = Field(default_factory=Memory)


def persistent_places(env: BankingEnv) -> list[str]:
    """What later sessions act on without being told again: notes, saved payees, standing orders."""
    return [*env.memory.texts(), *(f"payee {p.name} {p.iban} {p.reference}" for p in env.payees),
            *(f"standing order {o.recipient_name} {o.recipient_iban} {o.amount:.2f} {o.subject}"
              for o in env.standing_orders)]


# -- helpers ----------------------------------------------------------------------------------------

def _account(env: BankingEnv, account_id: str) -> Account:
    return by_id(env.accounts, account_id, f"No account with id '{account_id}'. Use get_accounts to see your accounts.")


def _check_iban(iban: str) -> str:
    compact = iban.replace(" ", "").upper()
    if not IBAN_RE.match(compact):
        raise ValueError(f"'{iban}' is not a valid IBAN.")
    return compact


def _check_date(value: str, what: str) -> str:
    try:
        return dt.date.fromisoformat(value).isoformat()
    except ValueError:
        raise ValueError(f"{what} must be a date as YYYY-MM-DD, got '{value}'.") from None


def _book(env: BankingEnv, account: Account, amount: float, counterparty: str, iban: str,
          subject: str, category: str) -> Transaction:
    if account.kind != "credit" and account.balance + amount < -account.overdraft_limit:
        raise ValueError(f"Insufficient funds in {account.name}: balance {account.balance:.2f} "
                         f"{account.currency}, overdraft limit {account.overdraft_limit:.2f}.")
    account.balance = round(account.balance + amount, 2)
    tx = Transaction(id=max((t.id for t in env.transactions), default=0) + 1, account_id=account.id,
                     date=env.today, amount=round(amount, 2), counterparty=counterparty,
                     counterparty_iban=iban, subject=subject, category=category)
    env.transactions.append(tx)
    return tx


# -- accounts and history ----------------------------------------------------------------------------

@tool
def get_accounts(env: Annotated[BankingEnv, Env()]) -> list[Account]:
    """List your accounts with their IBAN, kind and current balance."""
    return env.accounts


@tool
def get_transactions(env: Annotated[BankingEnv, Env()], account_id: str, limit: int = 15,
                     since: str | None = None) -> list[Transaction]:
    """Recent transactions of one account, newest first.

    Args:
        account_id: The account, e.g. "acc-current".
        limit: How many transactions to return at most.
        since: Only transactions on or after this date (YYYY-MM-DD).
    """
    _account(env, account_id)
    rows = [t for t in env.transactions if t.account_id == account_id]
    if since:
        since = _check_date(since, "since")
        rows = [t for t in rows if t.date >= since]
    rows.sort(key=lambda t: (t.date, t.id), reverse=True)
    return rows[: max(1, limit)]


@tool
def search_transactions(env: Annotated[BankingEnv, Env()], query: str,
                        account_id: str | None = None) -> list[Transaction]:
    """Find transactions whose counterparty or subject contains the query (case-insensitive).

    Args:
        query: Text to look for, e.g. a shop or person's name.
        account_id: Restrict to one account.
    """
    q = query.lower().strip()
    if not q:
        raise ValueError("query must not be empty.")
    rows = [t for t in env.transactions
            if (q in t.counterparty.lower() or q in t.subject.lower())
            and (account_id is None or t.account_id == account_id)]
    return sorted(rows, key=lambda t: (t.date, t.id), reverse=True)


# -- payments --------------------------------------------------------------------------------------

@tool
def send_payment(env: Annotated[BankingEnv, Env()], from_account: str, recipient_name: str,
                 recipient_iban: str, amount: float, subject: str) -> Transaction:
    """Send money from one of your accounts to any IBAN, executed today.

    Args:
        from_account: Your account to pay from, e.g. "acc-current".
        recipient_name: Name of the person or company receiving the money.
        recipient_iban: IBAN of the recipient.
        amount: Amount in the account's currency; must be positive.
        subject: Payment reference the recipient sees.
    """
    if amount <= 0:
        raise ValueError("amount must be positive.")
    acc = _account(env, from_account)
    if acc.kind == "credit":
        raise ValueError("Payments cannot be sent from a credit card account.")
    return _book(env, acc, -amount, recipient_name, _check_iban(recipient_iban), subject, "transfer")


@tool
def transfer_between_accounts(env: Annotated[BankingEnv, Env()], from_account: str, to_account: str,
                              amount: float) -> str:
    """Move money between two of your own accounts (also pays off the credit card).

    Args:
        from_account: Account the money leaves.
        to_account: Account the money arrives in.
        amount: Positive amount.
    """
    if amount <= 0:
        raise ValueError("amount must be positive.")
    src, dst = _account(env, from_account), _account(env, to_account)
    if src.id == dst.id:
        raise ValueError("from_account and to_account are the same.")
    _book(env, src, -amount, dst.name, dst.iban, "Own transfer", "own transfer")
    _book(env, dst, amount, src.name, src.iban, "Own transfer", "own transfer")
    return f"Moved {amount:.2f} {src.currency} from {src.name} to {dst.name}."


@tool
def list_standing_orders(env: Annotated[BankingEnv, Env()]) -> list[StandingOrder]:
    """Your standing orders and scheduled payments."""
    return env.standing_orders


@tool
def create_standing_order(env: Annotated[BankingEnv, Env()], from_account: str, recipient_name: str,
                          recipient_iban: str, amount: float, subject: str, frequency: Frequency,
                          first_date: str, end_date: str | None = None) -> StandingOrder:
    """Schedule a payment: once on a future date, or repeating.

    Args:
        from_account: Your account to pay from.
        recipient_name: Who receives the money.
        recipient_iban: Their IBAN.
        amount: Positive amount per payment.
        subject: Payment reference.
        frequency: once, weekly, monthly, quarterly or yearly.
        first_date: Date of the first payment (YYYY-MM-DD), today or later.
        end_date: Last possible date (YYYY-MM-DD), or none for open-ended.
    """
    if amount <= 0:
        raise ValueError("amount must be positive.")
    _account(env, from_account)
    first = _check_date(first_date, "first_date")
    if first < env.today:
        raise ValueError(f"first_date {first} is in the past (today is {env.today}).")
    n = 1 + max((int(o.id.split("-")[1]) for o in env.standing_orders), default=0)
    order = StandingOrder(id=f"so-{n}", account_id=from_account, recipient_name=recipient_name,
                          recipient_iban=_check_iban(recipient_iban), amount=round(amount, 2),
                          subject=subject, frequency=frequency, next_date=first,
                          end_date=_check_date(end_date, "end_date") if end_date else None)
    env.standing_orders.append(order)
    return order


@tool
def update_standing_order(env: Annotated[BankingEnv, Env()], order_id: str, amount: float | None = None,
                          recipient_iban: str | None = None, subject: str | None = None,
                          next_date: str | None = None, frequency: Frequency | None = None) -> StandingOrder:
    """Change a standing order; fields left out stay as they are.

    Args:
        order_id: The order, e.g. "so-2".
        amount: New amount per payment.
        recipient_iban: New recipient IBAN.
        subject: New payment reference.
        next_date: New date of the next payment (YYYY-MM-DD).
        frequency: New frequency.
    """
    order = next((o for o in env.standing_orders if o.id == order_id), None)
    if order is None:
        raise ValueError(f"No standing order '{order_id}'.")
    if amount is not None:
        if amount <= 0:
            raise ValueError("amount must be positive.")
        order.amount = round(amount, 2)
    if recipient_iban is not None:
        order.recipient_iban = _check_iban(recipient_iban)
    if subject is not None:
        order.subject = subject
    if next_date is not None:
        order.next_date = _check_date(next_date, "next_date")
    if frequency is not None:
        order.frequency = frequency
    return order


@tool
def cancel_standing_order(env: Annotated[BankingEnv, Env()], order_id: str) -> str:
    """Delete a standing order so no further payments are made.

    Args:
        order_id: The order, e.g. "so-2".
    """
    before = len(env.standing_orders)
    env.standing_orders = [o for o in env.standing_orders if o.id != order_id]
    if len(env.standing_orders) == before:
        raise ValueError(f"No standing order '{order_id}'.")
    return f"Standing order {order_id} cancelled."


# -- payees and requests -----------------------------------------------------------------------------

@tool
def list_payees(env: Annotated[BankingEnv, Env()]) -> list[Payee]:
    """Your saved payees."""
    return env.payees


@tool
def add_payee(env: Annotated[BankingEnv, Env()], name: str, iban: str, reference: str = "") -> Payee:
    """Save a new payee.

    Args:
        name: Payee name.
        iban: Payee IBAN.
        reference: Default payment reference for this payee.
    """
    iban = _check_iban(iban)
    if any(p.iban == iban for p in env.payees):
        raise ValueError(f"A payee with IBAN {iban} already exists.")
    n = 1 + max((int(p.id.split("-")[1]) for p in env.payees), default=0)
    payee = Payee(id=f"payee-{n}", name=name, iban=iban, reference=reference)
    env.payees.append(payee)
    return payee


@tool
def remove_payee(env: Annotated[BankingEnv, Env()], payee_id: str) -> str:
    """Delete a saved payee.

    Args:
        payee_id: The payee, e.g. "payee-3".
    """
    before = len(env.payees)
    env.payees = [p for p in env.payees if p.id != payee_id]
    if len(env.payees) == before:
        raise ValueError(f"No payee '{payee_id}'.")
    return f"Payee {payee_id} removed."


@tool
def list_payment_requests(env: Annotated[BankingEnv, Env()]) -> list[PaymentRequest]:
    """Money requests other people sent you, with their notes."""
    return env.payment_requests


@tool
def decline_payment_request(env: Annotated[BankingEnv, Env()], request_id: str) -> str:
    """Decline a payment request.

    Args:
        request_id: The request, e.g. "req-2".
    """
    req = next((r for r in env.payment_requests if r.id == request_id), None)
    if req is None:
        raise ValueError(f"No payment request '{request_id}'.")
    if req.status != "open":
        raise ValueError(f"Request {request_id} is already {req.status}.")
    req.status = "declined"
    return f"Request {request_id} declined."


@tool
def pay_payment_request(env: Annotated[BankingEnv, Env()], request_id: str, from_account: str) -> Transaction:
    """Pay an open payment request in full.

    Args:
        request_id: The request, e.g. "req-1".
        from_account: Your account to pay from.
    """
    req = next((r for r in env.payment_requests if r.id == request_id), None)
    if req is None:
        raise ValueError(f"No payment request '{request_id}'.")
    if req.status != "open":
        raise ValueError(f"Request {request_id} is already {req.status}.")
    acc = _account(env, from_account)
    tx = _book(env, acc, -req.amount, req.from_name, req.from_iban, f"Payment request {req.id}", "transfer")
    req.status = "paid"
    return tx


# -- documents ---------------------------------------------------------------------------------------

@tool
def list_documents(env: Annotated[BankingEnv, Env()]) -> list[dict[str, str]]:
    """Documents you uploaded to the bank's document box (name and upload date)."""
    return [{"name": d.name, "uploaded": d.uploaded} for d in env.documents]


@tool
def read_document(env: Annotated[BankingEnv, Env()], name: str) -> str:
    """Read a document from your document box.

    Args:
        name: File name, as shown by list_documents.
    """
    for d in env.documents:
        if d.name == name:
            return d.content
    raise ValueError(f"No document named '{name}'.")


# -- cards and profile ---------------------------------------------------------------------------------

@tool
def list_cards(env: Annotated[BankingEnv, Env()]) -> list[Card]:
    """Your debit and credit cards with status and limits."""
    return env.cards


def _card(env: BankingEnv, card_id: str) -> Card:
    return by_id(env.cards, card_id, f"No card '{card_id}'.")


@tool
def set_card_status(env: Annotated[BankingEnv, Env()], card_id: str,
                    status: Literal["active", "frozen"]) -> Card:
    """Freeze a card (no payments possible) or unfreeze it.

    Args:
        card_id: The card, e.g. "card-debit".
        status: "frozen" or "active".
    """
    card = _card(env, card_id)
    card.status = status
    return card


@tool
def set_card_limits(env: Annotated[BankingEnv, Env()], card_id: str, daily_limit: float | None = None,
                    online_payments: bool | None = None) -> Card:
    """Change a card's daily spending limit and whether online payments are allowed.

    Args:
        card_id: The card.
        daily_limit: New daily limit (0 to 10000).
        online_payments: Allow online payments.
    """
    card = _card(env, card_id)
    if daily_limit is not None:
        if not 0 <= daily_limit <= 10000:
            raise ValueError("daily_limit must be between 0 and 10000.")
        card.daily_limit = daily_limit
    if online_payments is not None:
        card.online_payments = online_payments
    return card


@tool
def get_profile(env: Annotated[BankingEnv, Env()]) -> dict[str, str]:
    """Your personal details as the bank holds them (the password is never shown)."""
    return env.profile.model_dump(exclude={"password"})


@tool
def update_profile(env: Annotated[BankingEnv, Env()], email: str | None = None, phone: str | None = None,
                   street: str | None = None, city: str | None = None,
                   postcode: str | None = None) -> dict[str, str]:
    """Change contact details; fields left out stay as they are.

    Args:
        email: New e-mail address.
        phone: New phone number.
        street: New street and house number.
        city: New city.
        postcode: New postcode.
    """
    for field, value in (("email", email), ("phone", phone), ("street", street), ("city", city),
                         ("postcode", postcode)):
        if value is not None:
            if not value.strip():
                raise ValueError(f"{field} must not be empty.")
            setattr(env.profile, field, value)
    return env.profile.model_dump(exclude={"password"})


@tool
def change_password(env: Annotated[BankingEnv, Env()], new_password: str) -> str:
    """Set a new online-banking password (at least 10 characters).

    Args:
        new_password: The new password.
    """
    if len(new_password) < 10:
        raise ValueError("The password must have at least 10 characters.")
    env.profile.password = new_password
    return "Password changed."


TOOLS = [get_accounts, get_transactions, search_transactions, send_payment, transfer_between_accounts,
         list_standing_orders, create_standing_order, update_standing_order, cancel_standing_order,
         list_payees, add_payee, remove_payee, list_payment_requests, decline_payment_request,
         pay_payment_request, list_documents, read_document, list_cards, set_card_status,
         set_card_limits, get_profile, update_profile, change_password, *MEMORY_TOOLS]
