"""Webhook subscriptions, deliveries and their retention."""
