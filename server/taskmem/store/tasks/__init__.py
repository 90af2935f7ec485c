"""Tasks and what hangs off them: plans and claims, actions, the message transcript, maintenance chores."""
