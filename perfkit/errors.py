"""The one error type users see: a message that names the thing and the fix."""


class PerfkitError(Exception):
    """A failure the user can act on. The CLI prints the message alone and exits 1."""


class ServiceError(PerfkitError):
    """A lab service or a remote endpoint that cannot be used."""

    def __init__(self, service: str, problem: str, fix: str, log: str | None = None):
        self.service, self.problem, self.fix, self.log = service, problem, fix, log
        where = f" (log: {log})" if log else ""
        super().__init__(f"{service}: {problem}{where}. Fix: {fix}")
