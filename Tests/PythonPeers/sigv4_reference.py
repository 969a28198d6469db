#!/usr/bin/env python3
"""Reference AWS SigV4 signer for the Swift tests: botocore's own ``SigV4Auth``.

Reads one JSON request (an object) or several (an array) on stdin and writes the matching
result(s) as JSON on stdout. A request looks like::

    {
      "method": "POST",
      "url": "https://example.appsync-api.us-east-1.amazonaws.com/event",
      "headers": {"content-type": "application/json; charset=UTF-8"},
      "body": "<base64 of the exact body bytes>",
      "date": "2015-08-30T12:36:00Z",
      "accessKeyID": "AKIDEXAMPLE",
      "secretAccessKey": "...",
      "sessionToken": null,
      "region": "us-east-1",
      "service": "appsync"
    }

and a result is ``{"headers": {...}, "canonicalRequest": "...", "stringToSign": "...",
"botocoreVersion": "..."}`` where ``headers`` are the request headers after
``SigV4Auth.add_auth`` (Authorization, X-Amz-Date, X-Amz-Security-Token, plus those passed in).

``--check`` only imports botocore and prints its version (exit status 0 when importable), so the
Swift tests can tell "botocore missing" apart from "botocore disagrees".

The script never prints the secret key; tests only use published example credentials anyway.
"""

import base64
import datetime
import json
import sys
from unittest import mock


def _import_botocore():
    import botocore
    import botocore.auth
    import botocore.awsrequest
    import botocore.credentials

    return botocore


class _CapturingSigV4Auth:
    """Builds a SigV4Auth subclass that records its canonical request and string to sign."""

    @staticmethod
    def make(botocore):
        class Capturing(botocore.auth.SigV4Auth):
            captured_canonical_request = None
            captured_string_to_sign = None

            def canonical_request(self, request):
                result = super().canonical_request(request)
                self.captured_canonical_request = result
                return result

            def string_to_sign(self, request, canonical_request):
                result = super().string_to_sign(request, canonical_request)
                self.captured_string_to_sign = result
                return result

        return Capturing


def _parse_date(text):
    # Accept "...Z" and "+00:00"; botocore wants a naive datetime in UTC.
    parsed = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return parsed


def sign_one(botocore, spec):
    credentials = botocore.credentials.Credentials(
        spec["accessKeyID"], spec["secretAccessKey"], spec.get("sessionToken")
    )
    body = base64.b64decode(spec.get("body") or "")
    request = botocore.awsrequest.AWSRequest(
        method=spec["method"],
        url=spec["url"],
        headers=dict(spec.get("headers") or {}),
        data=body,
    )
    auth = _CapturingSigV4Auth.make(botocore)(credentials, spec["service"], spec["region"])
    frozen = _parse_date(spec["date"])
    # SigV4Auth.add_auth stamps request.context['timestamp'] from
    # botocore.auth.get_current_datetime() (botocore >= 1.32; older versions called
    # datetime.datetime.utcnow(), which botocore's own tests patched). Freeze that call.
    with mock.patch.object(botocore.auth, "get_current_datetime", return_value=frozen):
        auth.add_auth(request)
    return {
        "headers": dict(request.headers.items()),
        "canonicalRequest": auth.captured_canonical_request,
        "stringToSign": auth.captured_string_to_sign,
        "botocoreVersion": botocore.__version__,
    }


def main(argv):
    try:
        botocore = _import_botocore()
    except ImportError as error:
        sys.stderr.write(f"botocore is not importable: {error}\n")
        return 3
    if "--check" in argv:
        sys.stdout.write(botocore.__version__ + "\n")
        return 0
    payload = json.load(sys.stdin)
    if isinstance(payload, list):
        result = [sign_one(botocore, spec) for spec in payload]
    else:
        result = sign_one(botocore, payload)
    json.dump(result, sys.stdout, ensure_ascii=False, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
