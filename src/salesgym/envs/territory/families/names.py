"""Common given names and surnames for synthetic stakeholders.

Drawn from many languages and regions so committees do not all look alike. Every name here is common;
the generator combines them at random, so no stakeholder is meant to be a real person.
"""

from __future__ import annotations

FIRST_NAMES: tuple[str, ...] = (
    # English-speaking
    "James", "Mary", "Robert", "Linda", "Michael", "Sarah", "David", "Emily", "Daniel", "Laura",
    "Thomas", "Rachel", "Andrew", "Megan", "Kevin", "Olivia",
    # Spanish and Portuguese
    "Carlos", "Sofia", "Diego", "Lucia", "Mateus", "Camila", "Javier", "Isabel",
    # French, German, Italian, Dutch
    "Julien", "Claire", "Lukas", "Anna", "Marco", "Giulia", "Pieter", "Sanne",
    # Nordic and Slavic
    "Erik", "Ingrid", "Mikael", "Astrid", "Pavel", "Katarzyna", "Dmitri", "Elena",
    # South Asian
    "Arjun", "Priya", "Rohan", "Ananya", "Vikram", "Meera",
    # East and Southeast Asian
    "Wei", "Mei", "Hiroshi", "Yuki", "Min-jun", "Ji-woo", "Thanh", "Linh",
    # African
    "Kwame", "Amara", "Tunde", "Zanele", "Kofi", "Nia",
    # Middle Eastern and Turkish
    "Omar", "Leila", "Karim", "Yasmin", "Emre", "Elif",
    # Gender-neutral
    "Jordan", "Taylor", "Morgan", "Alex",
)  # fmt: skip

LAST_NAMES: tuple[str, ...] = (
    # English-speaking
    "Smith", "Johnson", "Brown", "Miller", "Wilson", "Taylor", "Clarke", "Walker", "Hughes", "Bennett",
    "Murphy", "Kelly", "Campbell", "Reed",
    # Spanish and Portuguese
    "Garcia", "Martinez", "Lopez", "Hernandez", "Silva", "Santos", "Ferreira", "Torres",
    # French, German, Italian, Dutch
    "Martin", "Dubois", "Moreau", "Schmidt", "Fischer", "Weber", "Rossi", "Ricci", "de Vries", "Jansen",
    # Nordic and Slavic
    "Andersson", "Nielsen", "Larsen", "Virtanen", "Novak", "Kowalski", "Ivanova", "Horvat",
    # South Asian
    "Patel", "Sharma", "Reddy", "Iyer", "Khan", "Das",
    # East and Southeast Asian
    "Chen", "Wang", "Li", "Tanaka", "Sato", "Kim", "Park", "Nguyen", "Tran", "Santiago",
    # African
    "Mensah", "Okafor", "Adeyemi", "Nkosi", "Mwangi", "Diallo",
    # Middle Eastern and Turkish
    "Haddad", "Nasser", "Rahimi", "Yilmaz", "Demir", "Cohen",
)  # fmt: skip
