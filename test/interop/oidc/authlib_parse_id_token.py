# Authlib (Debian's python3-authlib) as a relying party: its OpenIDMixin.parse_id_token — signature from
# the JWKS at the discovered jwks_uri, iss, aud, exp, iat, nonce, at_hash — on a token response from Signet.
# argv: discovery URL, client_id, nonce; stdin: the token response (JSON). Prints the claims as JSON;
# exits 1 with the error's name when Authlib refuses the id_token.
import json
import sys
import urllib.request

from authlib.integrations.base_client.sync_openid import OpenIDMixin


def fetch_json(url):
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.loads(response.read().decode('utf-8'))


class Client(OpenIDMixin):
    def __init__(self, discovery_url, client_id):
        self.client_id = client_id
        self.server_metadata = fetch_json(discovery_url)

    def load_server_metadata(self):
        return self.server_metadata

    def fetch_jwk_set(self, force=False):
        # as OpenIDMixin does, over urllib instead of a framework's HTTP session
        if 'jwks' in self.server_metadata and not force:
            return self.server_metadata['jwks']
        self.server_metadata['jwks'] = fetch_json(self.server_metadata['jwks_uri'])
        return self.server_metadata['jwks']


def main():
    discovery_url, client_id, nonce = sys.argv[1], sys.argv[2], sys.argv[3]
    token = json.load(sys.stdin)
    try:
        claims = Client(discovery_url, client_id).parse_id_token(token, nonce, leeway=0)
    except Exception as error:  # Authlib's JoseError subclasses: BadSignatureError, InvalidClaimError …
        print(type(error).__name__ + ': ' + str(error), file=sys.stderr)
        sys.exit(1)
    print(json.dumps(dict(claims)))


main()
