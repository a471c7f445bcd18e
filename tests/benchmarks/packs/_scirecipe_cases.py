"""The Thoth paper's two case studies (Figs. 7 and 8, the permeability assay) as raw answers,
and a structured gold for their four-step reference (wash, remove, incubate, wash)."""

GOLD = [
    {
        "action": "wash",
        "objects": ["spheroids"],
        "parameters": ["500 µl ice-cold d-pbs(+)", "twice"],
    },
    {"action": "remove", "objects": ["supernatant"], "parameters": ["with a pipette"]},
    {
        "action": "incubate",
        "objects": ["spheroids"],
        "parameters": ["500 µl 4% pfa", "room temperature", "10 min"],
    },
    {
        "action": "wash",
        "objects": ["spheroids"],
        "parameters": ["500 µl ice-cold d-pbs(+)", "twice"],
    },
]

_GROK_KEY = [
    ("remove", ["medium"], []),
    ("wash", ["spheroids"], ["with 1x pbs"]),
    ("incubate", ["spheroids"], ["in 4% pfa", "30 min", "room temperature"]),
    ("wash", ["spheroids"], ["with 1x pbs", "3 times"]),
    ("incubate", ["spheroids"], ["in 0.1% triton x-100", "15 min", "room temperature"]),
    ("wash", ["spheroids"], ["with 1x pbs", "3 times"]),
    ("incubate", ["spheroids"], ["in blocking buffer", "1 h", "room temperature"]),
    ("incubate", ["spheroids"], ["in primary antibody", "overnight", "4 °c"]),
    ("wash", ["spheroids"], ["with 1x pbs", "3 times"]),
    ("incubate", ["spheroids"], ["in secondary antibody", "1 h", "room temperature"]),
    ("wash", ["spheroids"], ["with 1x pbs", "3 times"]),
    ("incubate", ["spheroids"], ["in dapi", "5 min", "room temperature"]),
    ("wash", ["spheroids"], ["with 1x pbs", "3 times"]),
]
_GROK_ORC = [
    "Remove the medium.",
    "Wash the spheroids with 1x pbs.",
    "Incubate the spheroids in 4% pfa for 30 min at room temperature.",
    "Wash the spheroids with 1x pbs 3 times.",
    "Incubate the spheroids in 0.1% triton x-100 for 15 min at room temperature.",
    "Wash the spheroids with 1x pbs 3 times.",
    "Incubate the spheroids in blocking buffer for 1 h at room temperature.",
    "Incubate the spheroids in primary antibody overnight at 4 °c.",
    "Wash the spheroids with 1x pbs 3 times.",
    "Incubate the spheroids in secondary antibody for 1 h at room temperature.",
    "Wash the spheroids with 1x pbs 3 times.",
    "Incubate the spheroids in dapi for 5 min at room temperature.",
    "Wash the spheroids with 1x pbs 3 times.",
]

_O1_KEY = [
    ("remove", ["culture medium"], ["from wells"]),
    ("wash", ["spheroids"], ["1x pbs", "once", "rt"]),
    ("remove", ["wash buffer"], []),
    ("incubate", ["spheroids"], ["4% pfa", "15 min", "rt"]),
    ("remove", ["fixative"], []),
    ("wash", ["spheroids"], ["1x pbs", "twice", "rt"]),
    ("remove", ["wash buffer"], []),
    ("incubate", ["spheroids"], ["0.1% triton x-100", "15 min", "rt"]),
    ("remove", ["permeabilization solution"], []),
    ("wash", ["spheroids"], ["1x pbs", "once", "rt"]),
    ("remove", ["wash buffer"], []),
    ("incubate", ["spheroids"], ["primary antibody", "1 h", "rt"]),
    ("remove", ["antibody solution"], []),
    ("wash", ["spheroids"], ["1x pbs", "once", "rt"]),
    ("remove", ["wash buffer"], []),
    ("incubate", ["spheroids"], ["secondary antibody", "1 h", "rt"]),
    ("remove", ["antibody solution"], []),
    ("wash", ["spheroids"], ["1x pbs", "once", "rt"]),
    ("remove", ["wash buffer"], []),
]
_O1_ORC = [
    "Remove culture medium from wells.",
    "Wash spheroids with 1x pbs once at rt.",
    "Remove wash buffer.",
    "Incubate spheroids with 4% pfa for 15 min at rt.",
    "Remove fixative.",
    "Wash spheroids with 1x pbs twice at rt.",
    "Remove wash buffer.",
    "Incubate spheroids with 0.1% triton x-100 for 15 min at rt.",
    "Remove permeabilization solution.",
    "Wash spheroids with 1x pbs once at rt.",
    "Remove wash buffer.",
    "Incubate spheroids with primary antibody for 1 h at rt.",
    "Remove antibody solution.",
    "Wash spheroids with 1x pbs once at rt.",
    "Remove wash buffer.",
    "Incubate spheroids with secondary antibody for 1 h at rt.",
    "Remove antibody solution.",
    "Wash spheroids with 1x pbs once at rt.",
    "Remove wash buffer.",
]


def _key_lines(key) -> str:
    import json

    return "\n".join(
        f"Step {k}: {json.dumps({'action': a, 'objects': o, 'parameters': p}, ensure_ascii=False)}"
        for k, (a, o, p) in enumerate(key, start=1)
    )


def _orc_lines(orc) -> str:
    return "\n".join(f"Step {k}: {line}" for k, line in enumerate(orc, start=1))


GROK4 = (
    "<think>\nThe goal is to outline the sequential steps for fixing and staining.\n</think>\n"
    f"<key>\n```\n{_key_lines(_GROK_KEY)}\n</key>\n```\n"
    f"<orc>\n{_orc_lines(_GROK_ORC)}\n</orc>\n"
    "<note>\nHandle paraformaldehyde and triton x-100 with care in a fume hood.\n</note>"
)

# o1's answer as printed in Fig. 8: code fences inside <key> and <orc>, and the note section
# closed with ``</notes>``, which the format gate rejects.
O1 = (
    "<think>\nWe will sequentially remove old medium, wash, fix with paraformaldehyde.\n</think>\n"
    f"<key>\n```\n{_key_lines(_O1_KEY)}\n```\n</key>\n"
    f"<orc>\n```\n{_orc_lines(_O1_ORC)}\n```\n</orc>\n"
    "<note>\nWear personal protective equipment.\n</notes>"
)
