"""The wait scheduler and the probes it runs for polled targets."""
