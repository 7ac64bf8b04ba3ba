"""Secret redaction: anything of secret shape, or a secret perfkit knows, becomes *** in what a report writes."""
from __future__ import annotations

import os
import re

from perfkit.config import provider_secrets

# What a secret looks like, wherever it stands in a text:
# - an AWS key id (AKIA long-term, ASIA temporary);
# - an AWS secret access key: a standalone run of exactly 40 base64 characters (no base64 character or '='
#   on either side) that mixes upper case, lower case and digits. The mix is what tells it apart from the
#   hex ids a report is full of: a git commit (40 lowercase hex), sha1/sha256 digests (40/64 hex, one case)
#   and longer base64 blobs such as embedded images are left alone. A 40-character path that happens to mix
#   cases and digits would be redacted too: over-redacting is the safe side;
# - a PEM private key block, to its END line (or, cut short, to the end of the text).
SECRET_VALUE = re.compile(
    r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"
    r"|(?<![A-Za-z0-9/+=])(?=[A-Za-z0-9/+]*[A-Z])(?=[A-Za-z0-9/+]*[a-z])(?=[A-Za-z0-9/+]*[0-9])"
    r"[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)",
    re.S)
# Environment variables whose values are secrets (key ids are caught by their AKIA/ASIA shape).
SECRET_ENV = ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN")
# A known secret shorter than this is not replaced verbatim: a placeholder such as "test" would wipe that word
# from the whole report. Real secrets (lab keys: 32 hex, AWS: 40+) are longer.
MIN_KNOWN_SECRET = 8
# A data: URI (an embedded image or font) is binary, not text: never redacted, so no 40-character slice of it
# can be cut out and break the picture.
DATA_URI = re.compile(r"data:[\w.+/-]+;base64,[A-Za-z0-9+/=]+")
REDACTED = "***"


def redact(text: str, known: list[str] | None = None) -> str:
    """Replace every value of secret shape (SECRET_VALUE) and every known secret (the lab's secret key, the AWS
    secret environment variables) with ***; embedded data: URIs are left whole."""
    known = sorted(_known_secrets() if known is None else known, key=len, reverse=True)  # longest first

    def clean(part: str) -> str:
        for secret in known:
            part = part.replace(secret, REDACTED)
        return SECRET_VALUE.sub(REDACTED, part)

    pieces, last = [], 0
    for uri in DATA_URI.finditer(text):
        pieces += [clean(text[last:uri.start()]), uri.group()]
        last = uri.end()
    return "".join(pieces) + clean(text[last:])


def redact_notebook(nb):
    """redact() every string of the notebook node (sources, outputs, metadata) in place, except binary images."""
    known = _known_secrets()  # looked up once, not once per string (it reads the providers' key files)

    def walk(value, key=""):
        if isinstance(value, str):
            # base64 image data is not text; image/svg+xml is
            return value if key.startswith("image/") and key != "image/svg+xml" else redact(value, known)
        if isinstance(value, dict):
            for k in value:
                value[k] = walk(value[k], str(k))
        elif isinstance(value, list):
            value[:] = [walk(item, key) for item in value]
        return value

    return walk(nb)


def _known_secrets() -> list[str]:
    found = provider_secrets() + [os.environ.get(name, "") for name in SECRET_ENV]
    return [s for s in found if len(s) >= MIN_KNOWN_SECRET]
