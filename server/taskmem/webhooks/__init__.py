"""Webhooks: signed POSTs of a task's events to its callback_url."""
