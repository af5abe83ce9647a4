"""Travel: one traveller's booking assistant — hotels, restaurants, car rentals and flights in
several cities, reservations, the traveller's profile, calendar and mail."""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from randori.tasks.environment import Environment
from randori.tasks.memory import MEMORY_TOOLS, Memory
from randori.tools import Env, tool
from randori.tools.lookup import by_id

Fare = Literal["economy", "business"]
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")
TIME_RE = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")


class City(BaseModel):
    name: str
    country: str
    airport: str
    aliases: list[str] = []


class Review(BaseModel):
    author: str
    date: str
    rating: int
    text: str


class Hotel(BaseModel):
    id: str
    name: str
    city: str
    address: str
    stars: int
    rating: float
    review_count: int
    price_per_night: float
    description: str
    amenities: list[str]
    check_in_from: str
    check_out_until: str
    phone: str
    max_guests: int = 2
    reviews: list[Review] = []


class Restaurant(BaseModel):
    id: str
    name: str
    city: str
    address: str
    cuisine: str
    rating: float
    review_count: int
    price_per_person: float
    dietary_options: list[str]
    hours: str  # e.g. "12:00-15:00, 19:00-23:00", the same on every open day
    closed_on: list[str] = []
    phone: str
    description: str
    reviews: list[Review] = []


class Car(BaseModel):
    code: str
    model: str
    car_type: Literal["mini", "compact", "sedan", "SUV", "van", "convertible"]
    fuel: Literal["petrol", "diesel", "hybrid", "electric"]
    transmission: Literal["manual", "automatic"]
    seats: int
    price_per_day: float


class CarRental(BaseModel):
    id: str
    name: str
    city: str
    address: str
    rating: float
    review_count: int
    hours: str
    closed_on: list[str] = []
    phone: str
    deposit: float
    fleet: list[Car]
    reviews: list[Review] = []


class Flight(BaseModel):
    id: str
    flight_number: str
    airline: str
    origin: str
    destination: str
    date: str
    departure: str  # local time at the origin
    arrival: str  # local time at the destination
    aircraft: str
    price_economy: float
    price_business: float
    baggage_economy: str
    baggage_business: str
    notes: str = ""


class Reservation(BaseModel):
    id: str
    kind: Literal["hotel", "restaurant", "car", "flight"]
    item_id: str  # the hotel, restaurant, rental company or flight id
    name: str
    city: str
    start_date: str  # check-in, table date, pick-up or flight date
    end_date: str | None = None  # check-out or car return
    time: str | None = None  # table time or flight departure
    guests: int = 1
    car_code: str | None = None
    fare: Fare | None = None
    total_price: float  # charged to the card on file; restaurants are paid on site (0)
    status: Literal["confirmed", "cancelled"] = "confirmed"
    booked_on: str
    message_from_provider: str = ""


class Profile(BaseModel):
    first_name: str
    last_name: str
    email: str
    phone: str
    date_of_birth: str
    nationality: str
    home_address: str
    passport_number: str
    passport_expiry: str
    card_holder: str
    card_number: str
    card_expiry: str
    seat_preference: Literal["aisle", "window", "no preference"]
    meal_preference: str


class Event(BaseModel):
    id: str
    title: str
    start: str  # YYYY-MM-DD HH:MM
    end: str
    location: str = ""
    description: str = ""


class Email(BaseModel):
    id: int
    folder: Literal["inbox", "sent"]
    sender: str
    to: list[str]
    subject: str
    body: str
    date: str


class TravelEnv(Environment):
    today: str
    now: str
    cities: list[City]
    profile: Profile
    hotels: list[Hotel]
    restaurants: list[Restaurant]
    car_rentals: list[CarRental]
    flights: list[Flight]
    reservations: list[Reservation]
    calendar: list[Event]
    emails: list[Email]
    memory: Memory = Field(default_factory=Memory)


def persistent_places(env: TravelEnv) -> list[str]:
    """What later sessions act on without being told again: the assistant's notes, and the saved
    traveller profile that every booking and confirmation reads (contact details, seat and meal)."""
    p = env.profile
    return [*env.memory.texts(), f"profile e-mail {p.email}", f"profile phone {p.phone}",
            f"profile home address {p.home_address}",
            f"profile seat {p.seat_preference}, meal {p.meal_preference}"]


# -- helpers ----------------------------------------------------------------------------------------

def _city(env: TravelEnv, name: str) -> City:
    key = name.strip().lower()
    for c in env.cities:
        if key in {c.name.lower(), c.airport.lower(), *(a.lower() for a in c.aliases)}:
            return c
    known = ", ".join(f"{c.name} ({c.airport})" for c in env.cities)
    raise ValueError(f"Unknown city '{name}'. Cities served: {known}.")


def _date(value: str, what: str) -> dt.date:
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise ValueError(f"{what} must be a date as YYYY-MM-DD, got '{value}'.") from None


def _future(env: TravelEnv, value: str, what: str) -> dt.date:
    d = _date(value, what)
    if d.isoformat() < env.today:
        raise ValueError(f"{what} {d.isoformat()} is in the past (today is {env.today}).")
    return d


def _datetime(value: str, what: str) -> str:
    try:
        return dt.datetime.strptime(value.strip(), "%Y-%m-%d %H:%M").strftime("%Y-%m-%d %H:%M")
    except ValueError:
        raise ValueError(f"{what} must be a date and time as 'YYYY-MM-DD HH:MM', got '{value}'.") from None


def _minutes(hhmm: str) -> int:
    h, m = hhmm.split(":")
    return int(h) * 60 + int(m)


def _windows(hours: str) -> list[tuple[int, int]]:
    out = []
    for part in hours.split(","):
        start, end = (p.strip() for p in part.split("-"))
        close = _minutes(end)
        out.append((_minutes(start), close if close > _minutes(start) else close + 24 * 60))
    return out


def _closed(closed_on: list[str], day: dt.date) -> bool:
    return WEEKDAYS[day.weekday()] in closed_on


def _hotel(env: TravelEnv, hotel_id: str) -> Hotel:
    return by_id(env.hotels, hotel_id, f"No hotel with id '{hotel_id}'. Use search_hotels to find hotel ids.")


def _restaurant(env: TravelEnv, restaurant_id: str) -> Restaurant:
    return by_id(env.restaurants, restaurant_id,
                 f"No restaurant with id '{restaurant_id}'. Use search_restaurants to find ids.")


def _rental(env: TravelEnv, company_id: str) -> CarRental:
    return by_id(env.car_rentals, company_id,
                 f"No car rental company with id '{company_id}'. Use search_car_rentals to find ids.")


def _flight(env: TravelEnv, flight_id: str) -> Flight:
    return by_id(env.flights, flight_id, f"No flight with id '{flight_id}'. Use search_flights to find flight ids.")


def _reserve(env: TravelEnv, **fields: Any) -> dict[str, Any]:
    n = 1 + max((int(r.id.lstrip("R")) for r in env.reservations), default=1000)
    res = Reservation(id=f"R{n}", booked_on=env.today, **fields)
    env.reservations.append(res)
    return _view(res)


def _view(res: Reservation) -> dict[str, Any]:
    # Fields that do not apply to this kind of booking (a hotel's fare, a flight's car) are left out.
    return res.model_dump(mode="json", exclude_none=True)


def _summary(obj: BaseModel, *fields: str) -> dict[str, Any]:
    data = obj.model_dump(mode="json")
    return {f: data[f] for f in fields}


# -- profile -----------------------------------------------------------------------------------------

@tool
def get_user_profile(env: Annotated[TravelEnv, Env()]) -> Profile:
    """The traveller's profile: contact details, passport and the payment card used for bookings."""
    return env.profile


@tool
def update_user_profile(env: Annotated[TravelEnv, Env()], email: str | None = None, phone: str | None = None,
                        home_address: str | None = None,
                        seat_preference: Literal["aisle", "window", "no preference"] | None = None,
                        meal_preference: str | None = None) -> Profile:
    """Change profile details; fields left out stay as they are.

    Args:
        email: New e-mail address for booking confirmations.
        phone: New phone number.
        home_address: New home address.
        seat_preference: Preferred seat on flights: aisle, window or no preference.
        meal_preference: Meal preference passed on to airlines, e.g. "vegetarian".
    """
    if email is not None and not EMAIL_RE.match(email.strip()):
        raise ValueError(f"'{email}' is not a valid e-mail address.")
    for field, value in (("email", email), ("phone", phone), ("home_address", home_address),
                         ("seat_preference", seat_preference), ("meal_preference", meal_preference)):
        if value is not None:
            if not value.strip():
                raise ValueError(f"{field} must not be empty.")
            setattr(env.profile, field, value.strip())
    return env.profile


# -- hotels --------------------------------------------------------------------------------------------

@tool
def search_hotels(env: Annotated[TravelEnv, Env()], city: str, max_price_per_night: float | None = None,
                  min_rating: float | None = None) -> list[dict[str, Any]]:
    """Hotels in a city with their rating, nightly price (EUR, per room) and the hotel's own description.

    Args:
        city: City name or airport code, e.g. "Lisbon" or "LIS".
        max_price_per_night: Only hotels at or below this price per night.
        min_rating: Only hotels rated at least this (guest rating out of 5).
    """
    c = _city(env, city)
    return [_summary(h, "id", "name", "address", "stars", "rating", "review_count", "price_per_night",
                     "description")
            for h in env.hotels
            if h.city == c.name and (max_price_per_night is None or h.price_per_night <= max_price_per_night)
            and (min_rating is None or h.rating >= min_rating)]


@tool
def get_hotel_details(env: Annotated[TravelEnv, Env()], hotel_id: str) -> dict[str, Any]:
    """Full details of one hotel: address, amenities, check-in and check-out times, phone.

    Args:
        hotel_id: The hotel, e.g. "lis-h1".
    """
    return _hotel(env, hotel_id).model_dump(mode="json", exclude={"reviews"})


@tool
def get_hotel_reviews(env: Annotated[TravelEnv, Env()], hotel_id: str) -> list[Review]:
    """Recent guest reviews of a hotel, newest first.

    Args:
        hotel_id: The hotel, e.g. "lis-h1".
    """
    return sorted(_hotel(env, hotel_id).reviews, key=lambda r: r.date, reverse=True)


@tool
def book_hotel(env: Annotated[TravelEnv, Env()], hotel_id: str, check_in: str, check_out: str,
               guests: int = 1) -> dict[str, Any]:
    """Book one room; the total (nights x price per night) is charged to the card on file.

    Args:
        hotel_id: The hotel, e.g. "lis-h1".
        check_in: Arrival date (YYYY-MM-DD).
        check_out: Departure date (YYYY-MM-DD), after check_in.
        guests: Number of guests in the room.
    """
    h = _hotel(env, hotel_id)
    start, end = _future(env, check_in, "check_in"), _date(check_out, "check_out")
    nights = (end - start).days
    if nights < 1:
        raise ValueError("check_out must be at least one day after check_in.")
    if not 1 <= guests <= h.max_guests:
        raise ValueError(f"A room at {h.name} takes 1 to {h.max_guests} guests.")
    return _reserve(env, kind="hotel", item_id=h.id, name=h.name, city=h.city, start_date=start.isoformat(),
                    end_date=end.isoformat(), guests=guests, total_price=round(nights * h.price_per_night, 2))


# -- restaurants ---------------------------------------------------------------------------------------

@tool
def search_restaurants(env: Annotated[TravelEnv, Env()], city: str, cuisine: str | None = None,
                       dietary: str | None = None) -> list[dict[str, Any]]:
    """Restaurants in a city with cuisine, rating, average price per person (EUR) and dietary options.

    Args:
        city: City name or airport code, e.g. "Porto".
        cuisine: Only restaurants whose cuisine contains this, e.g. "seafood".
        dietary: Only restaurants offering this, e.g. "vegetarian", "vegan", "gluten-free", "halal".
    """
    c = _city(env, city)
    rows = [r for r in env.restaurants if r.city == c.name]
    if cuisine:
        rows = [r for r in rows if cuisine.strip().lower() in r.cuisine.lower()]
    if dietary:
        rows = [r for r in rows if dietary.strip().lower() in (d.lower() for d in r.dietary_options)]
    return [_summary(r, "id", "name", "address", "cuisine", "rating", "review_count", "price_per_person",
                     "dietary_options", "description") for r in rows]


@tool
def get_restaurant_details(env: Annotated[TravelEnv, Env()], restaurant_id: str) -> dict[str, Any]:
    """Full details of one restaurant, including opening hours and the days it is closed.

    Args:
        restaurant_id: The restaurant, e.g. "lis-r2".
    """
    return _restaurant(env, restaurant_id).model_dump(mode="json", exclude={"reviews"})


@tool
def get_restaurant_reviews(env: Annotated[TravelEnv, Env()], restaurant_id: str) -> list[Review]:
    """Recent guest reviews of a restaurant, newest first.

    Args:
        restaurant_id: The restaurant, e.g. "lis-r2".
    """
    return sorted(_restaurant(env, restaurant_id).reviews, key=lambda r: r.date, reverse=True)


@tool
def reserve_restaurant(env: Annotated[TravelEnv, Env()], restaurant_id: str, date: str, time: str,
                       party_size: int) -> dict[str, Any]:
    """Reserve a table. The restaurant must be open that day, and the table must start within its opening
    hours at least one hour before closing. The bill is paid at the restaurant.

    Args:
        restaurant_id: The restaurant, e.g. "lis-r2".
        date: Day of the meal (YYYY-MM-DD).
        time: Table time, 24-hour HH:MM, e.g. "19:30".
        party_size: Number of people, 1 to 12.
    """
    r = _restaurant(env, restaurant_id)
    day = _future(env, date, "date")
    if not TIME_RE.match(time):
        raise ValueError(f"time must be HH:MM (24-hour), got '{time}'.")
    if not 1 <= party_size <= 12:
        raise ValueError("party_size must be between 1 and 12.")
    if _closed(r.closed_on, day):
        raise ValueError(f"{r.name} is closed on {WEEKDAYS[day.weekday()]}s.")
    t = _minutes(time)
    if not any(start <= t <= end - 60 for start, end in _windows(r.hours)):
        raise ValueError(f"{r.name} takes tables during {r.hours}, up to one hour before closing; "
                         f"{time} is not possible.")
    return _reserve(env, kind="restaurant", item_id=r.id, name=r.name, city=r.city,
                    start_date=day.isoformat(), time=time, guests=party_size, total_price=0.0)


# -- car rental ------------------------------------------------------------------------------------------

@tool
def search_car_rentals(env: Annotated[TravelEnv, Env()], city: str) -> list[dict[str, Any]]:
    """Car rental companies in a city with address, rating, opening hours and closing days.

    Args:
        city: City name or airport code, e.g. "Barcelona".
    """
    c = _city(env, city)
    return [_summary(r, "id", "name", "address", "rating", "review_count", "hours", "closed_on")
            for r in env.car_rentals if r.city == c.name]


@tool
def get_car_rental_details(env: Annotated[TravelEnv, Env()], company_id: str) -> dict[str, Any]:
    """A rental company's fleet (car code, model, type, fuel, transmission, seats, price per day in EUR),
    deposit and contact details.

    Args:
        company_id: The company, e.g. "opo-c1".
    """
    return _rental(env, company_id).model_dump(mode="json", exclude={"reviews"})


@tool
def get_car_rental_reviews(env: Annotated[TravelEnv, Env()], company_id: str) -> list[Review]:
    """Recent customer reviews of a car rental company, newest first.

    Args:
        company_id: The company, e.g. "opo-c1".
    """
    return sorted(_rental(env, company_id).reviews, key=lambda r: r.date, reverse=True)


@tool
def rent_car(env: Annotated[TravelEnv, Env()], company_id: str, car_code: str, pickup_date: str,
             return_date: str) -> dict[str, Any]:
    """Rent a car; the office must be open on both days. Each started day is charged (a same-day return
    counts as one day) to the card on file.

    Args:
        company_id: The rental company, e.g. "opo-c1".
        car_code: The car's code from get_car_rental_details, e.g. "DD-2".
        pickup_date: Pick-up date (YYYY-MM-DD).
        return_date: Return date (YYYY-MM-DD), not before pickup_date.
    """
    co = _rental(env, company_id)
    car = next((c for c in co.fleet if c.code == car_code), None)
    if car is None:
        raise ValueError(f"{co.name} has no car '{car_code}'. Codes: {', '.join(c.code for c in co.fleet)}.")
    start, end = _future(env, pickup_date, "pickup_date"), _date(return_date, "return_date")
    if end < start:
        raise ValueError("return_date must not be before pickup_date.")
    for what, day in (("pick-up", start), ("return", end)):
        if _closed(co.closed_on, day):
            raise ValueError(f"{co.name} is closed on {WEEKDAYS[day.weekday()]}s; choose another {what} day.")
    days = max(1, (end - start).days)
    return _reserve(env, kind="car", item_id=co.id, name=f"{co.name}: {car.model}", city=co.city,
                    start_date=start.isoformat(), end_date=end.isoformat(), car_code=car.code,
                    total_price=round(days * car.price_per_day, 2))


# -- flights ---------------------------------------------------------------------------------------------

@tool
def search_flights(env: Annotated[TravelEnv, Env()], origin: str, destination: str,
                   date: str) -> list[Flight]:
    """Direct flights between two cities on one day, with local departure/arrival times, fares in EUR,
    baggage allowances and the airline's notes.

    Args:
        origin: Departure city or airport code, e.g. "Zurich" or "ZRH".
        destination: Arrival city or airport code.
        date: Day of departure (YYYY-MM-DD).
    """
    o, d = _city(env, origin), _city(env, destination)
    day = _date(date, "date").isoformat()
    rows = [f for f in env.flights if f.origin == o.name and f.destination == d.name and f.date == day]
    return sorted(rows, key=lambda f: f.departure)


@tool
def get_flight_details(env: Annotated[TravelEnv, Env()], flight_id: str) -> Flight:
    """One flight's schedule, fares, baggage allowances and notes.

    Args:
        flight_id: The flight, e.g. "AT1923-0521".
    """
    return _flight(env, flight_id)


@tool
def book_flight(env: Annotated[TravelEnv, Env()], flight_id: str, fare: Fare = "economy") -> dict[str, Any]:
    """Book a seat for the traveller (passport details from the profile); the fare is charged to the card
    on file.

    Args:
        flight_id: The flight, e.g. "AT1923-0521".
        fare: "economy" or "business".
    """
    f = _flight(env, flight_id)
    _future(env, f.date, "The flight date")
    price = f.price_economy if fare == "economy" else f.price_business
    return _reserve(env, kind="flight", item_id=f.id,
                    name=f"{f.flight_number} {f.origin} → {f.destination}", city=f.destination,
                    start_date=f.date, time=f.departure, fare=fare, total_price=price)


# -- reservations ------------------------------------------------------------------------------------------

@tool
def list_reservations(env: Annotated[TravelEnv, Env()],
                      include_cancelled: bool = False) -> list[dict[str, Any]]:
    """The traveller's reservations (hotels, tables, cars, flights), by start date.

    Args:
        include_cancelled: Also show cancelled reservations.
    """
    rows = [r for r in env.reservations if include_cancelled or r.status == "confirmed"]
    return [_view(r) for r in sorted(rows, key=lambda r: (r.start_date, r.time or "", r.id))]


@tool
def cancel_reservation(env: Annotated[TravelEnv, Env()], reservation_id: str) -> str:
    """Cancel a reservation (free of charge up to its start date).

    Args:
        reservation_id: The reservation, e.g. "R1002".
    """
    res = next((r for r in env.reservations if r.id == reservation_id), None)
    if res is None:
        raise ValueError(f"No reservation '{reservation_id}'. Use list_reservations to see yours.")
    if res.status == "cancelled":
        raise ValueError(f"Reservation {reservation_id} is already cancelled.")
    if res.start_date < env.today:
        raise ValueError(f"Reservation {reservation_id} has already started and cannot be cancelled.")
    res.status = "cancelled"
    return f"Reservation {reservation_id} ({res.name}, {res.start_date}) cancelled."


# -- calendar ----------------------------------------------------------------------------------------------

@tool
def list_calendar_events(env: Annotated[TravelEnv, Env()], start_date: str, end_date: str) -> list[Event]:
    """Calendar events that overlap a date range.

    Args:
        start_date: First day (YYYY-MM-DD).
        end_date: Last day (YYYY-MM-DD), inclusive.
    """
    lo, hi = _date(start_date, "start_date").isoformat(), _date(end_date, "end_date").isoformat()
    return sorted((e for e in env.calendar if e.start[:10] <= hi and e.end[:10] >= lo), key=lambda e: e.start)


@tool
def create_calendar_event(env: Annotated[TravelEnv, Env()], title: str, start: str, end: str,
                          location: str = "", description: str = "") -> Event:
    """Add an event to the traveller's calendar.

    Args:
        title: Event title.
        start: Start, local time, 'YYYY-MM-DD HH:MM'.
        end: End, local time, 'YYYY-MM-DD HH:MM', after start.
        location: Where it takes place.
        description: Notes.
    """
    if not title.strip():
        raise ValueError("title must not be empty.")
    s, e = _datetime(start, "start"), _datetime(end, "end")
    if e <= s:
        raise ValueError("end must be after start.")
    n = 1 + max((int(ev.id.split("-")[1]) for ev in env.calendar), default=0)
    event = Event(id=f"ev-{n}", title=title.strip(), start=s, end=e, location=location,
                  description=description)
    env.calendar.append(event)
    return event


# -- mail ----------------------------------------------------------------------------------------------

@tool
def list_emails(env: Annotated[TravelEnv, Env()],
                folder: Literal["inbox", "sent"] = "inbox") -> list[dict[str, Any]]:
    """Mails in a folder, newest first (id, sender, recipients, subject, date). Read one with read_email.

    Args:
        folder: "inbox" or "sent".
    """
    rows = sorted((m for m in env.emails if m.folder == folder), key=lambda m: (m.date, m.id), reverse=True)
    return [_summary(m, "id", "sender", "to", "subject", "date") for m in rows]


@tool
def read_email(env: Annotated[TravelEnv, Env()], email_id: int) -> Email:
    """One mail with its full text.

    Args:
        email_id: The mail's id from list_emails.
    """
    for m in env.emails:
        if m.id == email_id:
            return m
    raise ValueError(f"No e-mail with id {email_id}.")


@tool
def search_emails(env: Annotated[TravelEnv, Env()], query: str) -> list[Email]:
    """Mails whose sender, subject or text contains the query (case-insensitive), newest first.

    Args:
        query: Text to look for, e.g. a name or a word from the subject.
    """
    q = query.strip().lower()
    if not q:
        raise ValueError("query must not be empty.")
    rows = [m for m in env.emails if q in m.sender.lower() or q in m.subject.lower() or q in m.body.lower()]
    return sorted(rows, key=lambda m: (m.date, m.id), reverse=True)


@tool
def send_email(env: Annotated[TravelEnv, Env()], to: list[str], subject: str, body: str) -> Email:
    """Send a mail from the traveller's address.

    Args:
        to: Recipient addresses.
        subject: Subject line.
        body: Text of the mail.
    """
    if not to:
        raise ValueError("to must name at least one recipient.")
    for addr in to:
        if not EMAIL_RE.match(addr):
            raise ValueError(f"'{addr}' is not a valid e-mail address.")
    mail = Email(id=1 + max((m.id for m in env.emails), default=0), folder="sent", sender=env.profile.email,
                 to=list(to), subject=subject, body=body, date=env.now)
    env.emails.append(mail)
    return mail


TOOLS = [get_user_profile, update_user_profile,
         search_hotels, get_hotel_details, get_hotel_reviews, book_hotel,
         search_restaurants, get_restaurant_details, get_restaurant_reviews, reserve_restaurant,
         search_car_rentals, get_car_rental_details, get_car_rental_reviews, rent_car,
         search_flights, get_flight_details, book_flight,
         list_reservations, cancel_reservation,
         list_calendar_events, create_calendar_event,
         list_emails, read_email, search_emails, send_email, *MEMORY_TOOLS]
