"""SQLAlchemy 1.4 tables for tickets and their notes (SQLite file or PostgreSQL)."""
from __future__ import annotations

import os

os.environ.setdefault("SQLALCHEMY_SILENCE_UBER_WARNING", "1")

import sqlalchemy as sa  # noqa: E402
from sqlalchemy.orm import declarative_base, relationship  # noqa: E402

Base = declarative_base()


class TicketRow(Base):
    __tablename__ = "support_tickets"

    id = sa.Column(sa.String(32), primary_key=True)
    created_at = sa.Column(sa.DateTime, nullable=False, index=True)
    updated_at = sa.Column(sa.DateTime, nullable=False)
    channel = sa.Column(sa.String(64), nullable=False)
    sender_id = sa.Column(sa.String(255), nullable=False, index=True)
    language = sa.Column(sa.String(8), nullable=False, index=True)
    category = sa.Column(sa.String(16), nullable=False, index=True)
    trigger = sa.Column(sa.String(32), nullable=False)
    priority = sa.Column(sa.Integer, nullable=False, index=True)
    priority_reasons = sa.Column(sa.JSON, nullable=False)
    status = sa.Column(sa.String(16), nullable=False, index=True)
    slots = sa.Column(sa.JSON, nullable=False)
    estimate_summary = sa.Column(sa.JSON, nullable=True)
    cards = sa.Column(sa.JSON, nullable=False)
    excerpt = sa.Column(sa.JSON, nullable=False)
    consent = sa.Column(sa.Boolean, nullable=False, default=False)
    contact = sa.Column(sa.Text, nullable=True)
    contact_kind = sa.Column(sa.String(16), nullable=True)

    notes = relationship("NoteRow", order_by="NoteRow.id", cascade="all, delete-orphan", lazy="selectin")


class NoteRow(Base):
    __tablename__ = "support_ticket_notes"

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    ticket_id = sa.Column(sa.String(32), sa.ForeignKey("support_tickets.id", ondelete="CASCADE"), index=True,
                          nullable=False)
    at = sa.Column(sa.DateTime, nullable=False)
    author = sa.Column(sa.String(128), nullable=False)
    kind = sa.Column(sa.String(16), nullable=False)
    text = sa.Column(sa.Text, nullable=False)
