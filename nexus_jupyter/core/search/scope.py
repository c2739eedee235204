"""Named services: a query that asks for a product no installed tool works with gets no hits.

"Create a card on our Trello board" has close neighbours in any catalogue that creates
things (a Stripe product, a GitHub project item), and no similarity score tells them from
a right answer: the query sits as close to them as a servable one does. What does tell is
the name. An agent's request usually names the service it means ("in Salesforce", "our
Zendesk", "on Spotify"); when no tool in the registry mentions that service (in its name,
description, parameters, tags or source), no tool serves the request, and search says so
rather than offering the nearest thing that works with something else.

:data:`SERVICES` lists well-known products and services that tools connect to. It is a
list of public names, written from general knowledge, not from any catalogue or query set.
It leaves out what a query names as a *topic* rather than a place to act: languages,
libraries, databases and tools that people search for (``terraform``, ``react``, ``npm``,
``mysql``), and sites that a generic web search or fetch tool can read (Wikipedia, Reddit,
Stack Overflow).
Names that are also ordinary words ("Zoom", "Linear", "Outlook") count only when the query
capitalises them mid-sentence; those that often stand inside the names of places or things
("Square", "Box", "Ring") are left out.

A name inside a value does not count: quoted text, URLs, e-mail addresses, paths and
``owner/repo`` (``facebook/react``), and the name after "named", "called" or "titled".

Measured on the toolret queries (``benchmarks/search_quality.py``): 7 of the 10 unservable
queries name a service the catalogue lacks, and none of the 90 servable ones does; the
unservable queries with no hits went from 40% to 70% in hybrid mode and from 10% to 70% in
keyword mode. On the check queries (``benchmarks/data/toolret-check-queries.json``) 11 of
20 unservable queries name one, and none of the 60 servable ones.

>>> mentioned_services("Create a card on our Trello board")
['Trello']
>>> mentioned_services("fork facebook/react and post a Zoom link")
['Zoom']
>>> mentioned_services("star the repo called 'trello-clone'")
[]
"""

from __future__ import annotations

import re

from .slots import without_values

__all__ = ["SERVICES", "mentioned_services"]

# Unambiguous names, matched in any case, by kind. Multi-word names are matched as phrases.
_ANY_CASE_BY_KIND = {
    "chat and calls": "slack|discord|microsoft teams|ms teams|telegram|whatsapp|wechat|"
    "mattermost|rocket.chat|webex|skype|google chat|google meet|facetime|imessage|intercom|twilio|vonage|ringcentral|"
    "viber|line messenger|zulip",
    "e-mail": "gmail|mailchimp|sendgrid|mailgun|postmark|sendinblue|convertkit|klaviyo|"
    "constant contact|protonmail|proton mail|yahoo mail|hotmail|superhuman",
    "crm and support": "salesforce|hubspot|pipedrive|zoho|zendesk|freshdesk|freshworks|"
    "help scout|helpscout|servicenow|dynamics 365|attio|gorgias|kustomer",
    "work and notes": "notion|jira|confluence|trello|asana|monday.com|clickup|basecamp|wrike|smartsheet|airtable|"
    "evernote|onenote|todoist|ticktick|miro|lucidchart|invision|pivotal tracker|youtrack|toggl|"
    "clockify|calendly|google calendar|outlook calendar|icloud calendar|apple calendar|"
    "apple notes|apple reminders|microsoft to do|google docs|google sheets|google slides|"
    "google forms|google keep|google tasks|google photos|google contacts|microsoft word|"
    "microsoft excel|powerpoint|sharepoint|onedrive|office 365|microsoft 365|typeform|"
    "surveymonkey|jotform|obsidian|logseq|roam research|grammarly|deepl",
    "design": "figma|canva|photoshop|illustrator|lightroom|adobe premiere|adobe acrobat|"
    "adobe express|framer",
    "files": "google drive|dropbox|icloud|icloud drive|backblaze|pcloud|wetransfer",
    "money and commerce": "stripe|paypal|adyen|braintree|klarna|venmo|zelle|cash app|revolut|coinbase|"
    "binance|robinhood|quickbooks|xero|freshbooks|shopify|woocommerce|bigcommerce|magento|etsy|"
    "ebay|gumroad|chargebee|recurly|expensify|brex|bamboohr|workday|rippling|docusign|hellosign|"
    "pandadoc|patreon|kickstarter|gofundme|eventbrite|ticketmaster",
    "social": "twitter|instagram|linkedin|tiktok|youtube|pinterest|snapchat|mastodon|bluesky|"
    "tumblr|twitch|vimeo|facebook|substack",
    "media": "spotify|apple music|youtube music|soundcloud|netflix|hulu|audible|deezer|sonos|"
    "plex|kindle",
    "travel and food": "google maps|uber|uber eats|lyft|airbnb|booking.com|expedia|doordash|grubhub|"
    "instacart|deliveroo|postmates|opentable|resy|skyscanner|google flights",
    "engineering": "github|gitlab|sentry|grafana|jenkins|circleci|travis ci|bitbucket|azure devops|teamcity|buildkite|vercel|"
    "netlify|heroku|digitalocean|cloudflare|firebase|supabase|snowflake|"
    "bigquery|redshift|databricks|looker|tableau|metabase|power bi|datadog|new relic|pagerduty|"
    "opsgenie|splunk|rollbar|bugsnag|honeycomb|mixpanel|amplitude|google analytics|launchdarkly|"
    "statuspage|snyk|sonarqube|codecov|okta|auth0|onelogin|1password|lastpass|bitwarden|algolia|"
    "contentful|wordpress|webflow|squarespace|azure|google cloud|docker hub",
    "home and health": "philips hue|google home|smartthings|home assistant|roomba|tesla|fitbit|"
    "garmin|strava|peloton|myfitnesspal|oura",
    "automation and learning": "zapier|ifttt|duolingo",
}
_ANY_CASE = "|".join(_ANY_CASE_BY_KIND.values())
# Names that are also ordinary words: they count only when capitalised in the query (and
# not as its first word, where every word is).
_CAPITALISED = """
Zoom|Linear|Outlook|Excel|Loom|Coda|Postman|Alexa|Gusto|Kayak|Sketch
"""


def _names(text: str) -> tuple[str, ...]:
    return tuple(n.strip() for n in text.replace("\n", "").split("|") if n.strip())


# Besides the values every search leaves out (quotes, URLs, e-mail, paths, owner/repo:
# :func:`.search_slots.without_values`), a name given to something: "a repo called X".
_NAMED = re.compile(r"\b(?:named|called|titled)\s+\S+", re.I)


# Names by their lower-cased words; the value says whether the name must be capitalised.
_BY_WORDS: dict[tuple[str, ...], bool] = {
    **{tuple(n.lower().split()): False for n in _names(_ANY_CASE)},
    **{tuple(n.lower().split()): True for n in _names(_CAPITALISED)},
}
_LONGEST = max(len(words) for words in _BY_WORDS)
#: Every service name this module knows, lower-cased.
SERVICES: frozenset[str] = frozenset(" ".join(words) for words in _BY_WORDS)
# A word as a name spells it: letters and digits, with inner dots, hyphens or a plus
# ("monday.com", "trello-clone" is one word and so not "trello").
_TOKEN = re.compile(r"[A-Za-z0-9](?:[\w.+-]*[A-Za-z0-9])?")


def mentioned_services(query: str) -> list[str]:
    """The known services ``query`` names outside its values, as written there, in query
    order (each once)."""
    tokens = _TOKEN.findall(_NAMED.sub(" ", without_values(query)))
    lowered = [t.lower() for t in tokens]
    out: dict[str, str] = {}
    start = 0
    while start < len(tokens):
        for size in range(min(_LONGEST, len(tokens) - start), 0, -1):  # longest name first
            words = tuple(lowered[start : start + size])
            capitalised = _BY_WORDS.get(words)
            if capitalised is None:
                continue
            if capitalised and (start == 0 or not tokens[start][0].isupper()):
                continue  # an ordinary word, or the query's first word
            name = " ".join(tokens[start : start + size])
            out.setdefault(name.lower(), name)
            start += size - 1
            break
        start += 1
    return list(out.values())
