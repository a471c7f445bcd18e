"""Prolific's researcher API (https://docs.prolific.com/api-reference): a small client
(:mod:`annotation.prolific.client`). Calls are made and logged by
:mod:`annotation.services.prolific`; nothing here touches the database."""
