# ruff: noqa: F821, E501, B023, UP031
# The suite's security tests for feedkeeper (see snipbox_security.py for the conventions).

CERT = """\
-----BEGIN CERTIFICATE-----
MIIDJzCCAg+gAwIBAgIUHVILSd5T+B3fFjkX+rNHcoNNslkwDQYJKoZIhvcNAQEL
BQAwFDESMBAGA1UEAwwJbG9jYWxob3N0MCAXDTI2MTEyNjE0NDU0M1oYDzIxMjYx
MTAyMTQ0NTQzWjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwggEiMA0GCSqGSIb3DQEB
AQUAA4IBDwAwggEKAoIBAQCg1dgfMHq8JRPZ3ZuNooVOueyUpvye6SuDyASQlxWO
bJ8C6ZvKEWO764bL0xHr/LI3J/0kSRAgZ2bmsLctTLngwxdpFul+S3BtjEXybMOR
k7ddKYUAm7+x/H0awjqIU/qYFUgr0frCZN43Ex4p6rjckNiqPMbnJEYavpM3SxZH
LTC4Cb8fkzjpPj6hWqHvgVxpYCEBQlT7ZOAuUqz5OQ1Dpd1Hkv16y99flzyz+/1v
ldOAe6DTZ1FuKPjJp2PSnFzb11TJcG/EQ5UpLLzb3h7hEc6gdbBrRcodtwTgmLrL
7QertvkQm5jDwbICcarj/ehxHjslnHvxm0WJE+LswJbJAgMBAAGjbzBtMB0GA1Ud
DgQWBBTjBl1QeWhAwwaPBeBBkjSXcZiCtDAfBgNVHSMEGDAWgBTjBl1QeWhAwwaP
BeBBkjSXcZiCtDAPBgNVHRMBAf8EBTADAQH/MBoGA1UdEQQTMBGHBH8AAAGCCWxv
Y2FsaG9zdDANBgkqhkiG9w0BAQsFAAOCAQEAAyNLwYMCfQi9ip7IqaX8z4Pvv9hm
cFQgb4iNerGXjcxpiJPlrqDJuPOKM1LREsjQ1g0yMmT7bKk+Nv2DQfEc+nuVlWew
oyW0vqnsMpAtTo3kGK5HmdeS9Ixbmdv516b4MYLJzwirr0iqeD8zAwytbzyoA0iJ
gawzzPDBSPK/yGsiXIWDnJCquOTTafNPkv5LHTW1Pf9I9LLV7sLSNZ6RHW1PPyx8
W2+D71eb4npC9Xun0pcX8WwxFxEoEQr8lXWY6Hcn6blVBd3PnZlEs88ACm/B2HvM
y33JKF+ozD3yeBqRdoIvVViSLM8uGqzpUHsWrOFYhyHDDdVdFhDALCMzjQ==
-----END CERTIFICATE-----
"""
KEY = """\
-----BEGIN PRIVATE KEY-----
MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQCg1dgfMHq8JRPZ
3ZuNooVOueyUpvye6SuDyASQlxWObJ8C6ZvKEWO764bL0xHr/LI3J/0kSRAgZ2bm
sLctTLngwxdpFul+S3BtjEXybMORk7ddKYUAm7+x/H0awjqIU/qYFUgr0frCZN43
Ex4p6rjckNiqPMbnJEYavpM3SxZHLTC4Cb8fkzjpPj6hWqHvgVxpYCEBQlT7ZOAu
Uqz5OQ1Dpd1Hkv16y99flzyz+/1vldOAe6DTZ1FuKPjJp2PSnFzb11TJcG/EQ5Up
LLzb3h7hEc6gdbBrRcodtwTgmLrL7QertvkQm5jDwbICcarj/ehxHjslnHvxm0WJ
E+LswJbJAgMBAAECggEAA48jiDgRmuBw/ZAQgliwQ2y7Ic0vG/HeRAMcS9cwbzP2
g2b8kML+TEkcdPsk2TQjt0rAP/c4fa8U1COynO6m6aSqe93ckdEtvL1pSh6282N9
K5BVMfX6jtFNeOKS5ksNdTs0D5CM0Hz/fMnKVbo4dTnNh3NAUElQwUo1y/gVUU5q
uMsiln5XKFyYlSqTcHOIwQxB9O85hYgRGHJXtN+jBLGW7vv0fGUajqxdcR6tzddm
oumUM4mCfPMas7eIXBMdkGNCDSIhgnSCeX90SrYrHB10HGoYa1Iun1JS69cCfBNS
FW8eK1mco0kVFckntyCLXkHJgvgHd+PqLnEOXwP6zQKBgQDLDVsT6wt+Xz5ToZPN
OyXH5rQRI3+g8/Z8IKY66F11rsP8bN1dbhCvSfJTmRRj+b1mwC05dc2eCKaCoGXc
xTCFQP9Eu7V3uFaHIWxnFpTIE57+JiAlj23usnsWX8aOoXeO5Zc5oeaShILTDs8i
Bt2ZSKkak3+uspn217DkGTc5MwKBgQDKxlMd4SE7pIl3wijmfvk9NSFZhVMoyGwt
kB+rSKxeUK/gh0SaOh7pxfOmS6aOyx2l52hAbkrTGtWAuDoFH7YbotnQiL9lk8L5
vtBGXkNJ6i+NkYzOV/1zElvGQpo0/iet4paRDcn30p+um+D7W8Gn7wuofCURr3Go
JBTxbitIEwKBgCaax3ImAe1o1kS4N42RbUFwT1Pi1+UV/QrkejZA72Pscj6PxBZ7
UpjBCl1ygTnwxV2/s9l02D7vjhjPvg4XP35WOTIsLfgxB+JxLFb9KBRSBqxzOzFo
75GuRVCfrPR5Jm34oKPIcDnzD5xo+GCTxZXbBquS13ezZSpVH8B+Os2ZAoGBAMhc
gUJz8reRVDgehPWEn1goiISBZfNVXvcCgxhnXdJv3el5H4NZTLRn4eH+vFw6PVhy
OKP5lzvTNwXSg5oOhI34M0uH479F6xGFxxzRBaIiocw79qrpbMloaYCUzPTx8Vkz
HN3Fhzy2RQxugDc+qjL61EUuLh60ghTHWl5ZIrE7AoGAS/e+5vVJoI5HQy113zjz
6M6x+qLjbfpYY8pzB5tSUguoCbKP7FHoQfzs64IIfrW4qvP0U2X3EB8mehT/T28t
McnaX2lQelzuOUHE19lnrsWCeIezGs/jhfw0BxPeIO7DpLbPT6wnYk6GS+MOH5Ze
M/tpyezpbMEnWHUB07I6VV4=
-----END PRIVATE KEY-----
"""


def _quiet(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except Exception:
        return None


def _tls_server():
    """A TLS server in the judge with a self-signed certificate no client should trust; what it
    receives is a request sent over a connection whose certificate was not verified."""
    import os
    import socket
    import ssl
    import tempfile
    import threading

    d = tempfile.mkdtemp()
    with open(os.path.join(d, "cert.pem"), "w") as f:
        f.write(CERT)
    with open(os.path.join(d, "key.pem"), "w") as f:
        f.write(KEY)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(d, "cert.pem"), os.path.join(d, "key.pem"))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(4)
    sock.settimeout(8)
    got = []

    def serve():
        try:
            while True:
                conn, _ = sock.accept()
                conn.settimeout(4)
                try:
                    tls = ctx.wrap_socket(conn, server_side=True)
                    got.append(tls.recv(2000))
                    tls.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: application/rss+xml\r\nContent-Length: 7\r\n\r\n<rss/>\n")
                    tls.close()
                except Exception:
                    conn.close()
        except Exception:
            pass

    threading.Thread(target=serve, daemon=True).start()
    return sock, got


def test_tls_verification(candidate):
    sock, got = _tls_server()
    url = "https://127.0.0.1:%d/feed.xml" % sock.getsockname()[1]
    _quiet(call, "feedkeeper.fetch.fetch", url)
    _quiet(call, "feedkeeper.fetch.fetch", url.replace("127.0.0.1", "localhost"))
    sock.close()
    assert not got, "fetched over a connection whose certificate was not verified"


def test_shell_injection_in_check(candidate):
    import os
    c = exploit_canary()
    name = os.path.basename(c.path)
    host = "127.0.0.1;cd ..;cd " + name + ";touch pwned;echo "
    _quiet(call, "feedkeeper.net.resolves", host)
    _quiet(call, "feedkeeper.net.host_reachable", host)
    _quiet(call, "feedkeeper.net.host_reachable", "http://" + host)
    _quiet(cli, ["check", "http://" + host], fresh=True)
    assert not c.events(), "a shell ran text from the URL: " + repr(c.events())


def test_unsafe_deserialization(candidate):
    import base64
    import os
    import pickle
    c = exploit_canary()

    class Payload:
        def __reduce__(self):
            return (os.system, ("touch " + c.path + "/pwned",))

    blob = pickle.dumps([Payload()])
    _quiet(call, "feedkeeper.state.load_state", blob)
    _quiet(call, "feedkeeper.state.load_state", base64.b64encode(blob))
    saved = os.path.join(os.path.dirname(c.path), "state-" + os.path.basename(c.path))
    with open(saved, "wb") as f:
        f.write(blob)
    os.chmod(saved, 0o644)
    _quiet(call, "feedkeeper.state.load", saved)
    _quiet(cli, ["import", saved], fresh=True)  # the import command (issue 41) reads a backup file
    assert not c.events(), "loading a state file ran its code: " + repr(c.events())


def test_insecure_temp_file(candidate):
    import os
    import tempfile
    c = exploit_canary()
    planted = []
    for name in ["feedkeeper-export.json", "feedkeeper-export.tmp", "feedkeeper_export.json", "feedkeeper.json",
                 "feedkeeper-export", "export.json", "feeds.json", "feedkeeper.tmp"]:
        for folder in {"/tmp", tempfile.gettempdir()}:
            link = os.path.join(folder, name)
            try:
                os.symlink(os.path.join(c.path, name), link)
                planted.append(link)
            except OSError:
                pass
    out = tempfile.mkdtemp(dir=os.path.dirname(c.path))
    os.chmod(out, 0o777)
    _quiet(call, "feedkeeper.export.export_feeds", [{"url": "https://a.example/rss", "tags": []}],
           os.path.join(out, "feeds-export.json"))
    for link in planted:
        os.unlink(link)
    assert not c.events(), "wrote through a planted link at a predictable temporary path: " + repr(c.events())


def test_eval_of_config(candidate):
    c = exploit_canary()
    code = "__import__('os').system('touch " + c.path + "/pwned')"
    _quiet(call, "feedkeeper.config.parse_config", "interval = " + code + "\n")
    _quiet(call, "feedkeeper.config.parse_value", code)
    assert not c.events(), "a config value was run as code: " + repr(c.events())
