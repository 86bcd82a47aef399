# Authlib (Debian's python3-authlib) as a client of Signet's opt-in grants (issue 43), through the
# discovery document: its OAuth2Session with client_secret_post.
#   client_credentials DISCOVERY_URL CLIENT_ID CLIENT_SECRET  → prints the token response (JSON)
#   device DISCOVERY_URL CLIENT_ID                            → prints the device authorization response
#                                                               (JSON, one line), waits for a line on
#                                                               stdin (the person approved), then polls
#                                                               once and prints the token response
# Exits 1 with the OAuth error on a refusal.
import json
import sys

from authlib.integrations.requests_client import OAuth2Session
from authlib.integrations.base_client.errors import OAuthError
import requests


def metadata(url):
    response = requests.get(url, timeout=30)
    response.raise_for_status()
    return response.json()


def main():
    mode, discovery_url, client_id = sys.argv[1], sys.argv[2], sys.argv[3]
    server = metadata(discovery_url)
    try:
        if mode == 'client_credentials':
            session = OAuth2Session(client_id, sys.argv[4], token_endpoint_auth_method='client_secret_post')
            token = session.fetch_token(server['token_endpoint'], grant_type='client_credentials')
        else:
            session = OAuth2Session(client_id, token_endpoint_auth_method='none')
            started = session.post(server['device_authorization_endpoint'], data={'client_id': client_id, 'scope': 'openid profile'}, timeout=30, withhold_token=True)
            started.raise_for_status()
            print(json.dumps(started.json()), flush=True)
            sys.stdin.readline()
            token = session.fetch_token(server['token_endpoint'], grant_type='urn:ietf:params:oauth:grant-type:device_code', device_code=started.json()['device_code'])
    except OAuthError as error:
        print(f'{error.error}: {error.description}', file=sys.stderr)
        sys.exit(1)
    print(json.dumps(dict(token)), flush=True)


main()
