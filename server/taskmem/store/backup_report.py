"""What `taskmem verify` (and `backup`, after its copy) says about a backup: its integrity and migration level."""

from __future__ import annotations

import dataclasses


class BackupRefused(Exception):
    """The backup cannot be made, read or restored as asked (the message says why)."""


@dataclasses.dataclass(frozen=True)
class BackupReport:
    """A backup's integrity check, the migrations it records against those this code ships, and its extent."""

    integrity: str  # "ok", or what the engine's check found
    recorded: dict[int, str]
    shipped: list[tuple[int, str, str]]
    tasks: int
    last_cursor: int

    @property
    def unknown(self) -> list[str]:
        """Migrations the backup records that this code does not ship (a newer release made it)."""
        known = {number for number, _, _ in self.shipped}
        return [name for number, name in sorted(self.recorded.items()) if number not in known]

    @property
    def pending(self) -> list[str]:
        """Migrations this code ships that the backup lacks: applied when a server starts on it."""
        return [name for number, name, _ in self.shipped if number not in self.recorded]

    @property
    def sound(self) -> bool:
        """The copy is whole and this code can serve it."""
        return self.integrity == "ok" and not self.unknown and bool(self.recorded)

    def lines(self) -> list[str]:
        level = self.recorded[max(self.recorded)] if self.recorded else "none (not a taskmem database)"
        said = [f"integrity: {self.integrity}",
                f"migration level: {level} ({len(self.recorded)} migrations recorded)"]
        if self.unknown:
            said.append(f"newer than this taskmem (its schema goes up to {self.shipped[-1][1]}): "
                        f"{', '.join(self.unknown)} unknown; a server of this release refuses it")
        elif self.pending:
            said.append(f"older than this taskmem: {len(self.pending)} migrations run when a server starts on it "
                        f"({', '.join(self.pending)})")
        else:
            said.append("schema: the same as this taskmem's")
        said.append(f"tasks: {self.tasks}; events up to cursor {self.last_cursor}")
        return said
