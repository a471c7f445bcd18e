"""The annotation codebook shown in training and on every item page (seed 000 §4.2, C.1, H.3):
what a critical failure is, its kinds, worked critical examples and acceptable variations."""

from __future__ import annotations

DEFINITION = (
    "A critical failure is an issue that fundamentally prevents the goal from being achieved, "
    "or makes L2 unusable as a set of followable instructions."
)
QUESTION = "Will this issue prevent L2 from achieving the goal?"
L1_NOTE = (
    "L1 reliably achieves the goal as written, but it may not be the only valid way to do so. "
    "Use it as a reliable reference, not the exclusive solution. Base your decision on the goal and L1, "
    "with as little outside knowledge as possible."
)

KINDS = [
    (
        "Contradictions",
        [
            (
                "Contradiction to the goal",
                "An L2 step directly contradicts a condition specified in the goal.",
            ),
            (
                "Contradiction to L1",
                "An L2 step directly contradicts or significantly diverges from an L1 step, preventing the goal from being achieved.",
            ),
        ],
    ),
    (
        "Logical or structural issues",
        [
            ("Internal inconsistency", "An L2 step is inconsistent with another step within L2."),
            (
                "Incoherence",
                "L2 has very low readability or logical flow and is hard to follow (no need to read L1 to see it).",
            ),
            (
                "Severe vagueness",
                "As a whole, L2 lacks so much essential detail from L1 that it becomes basically unusable.",
            ),
        ],
    ),
    (
        "Missing or extraneous actions",
        [
            (
                "Missing critical action",
                "An essential L1 step is completely omitted in L2, with no equivalent or implied action.",
            ),
            (
                "Counterproductive extra action",
                "An L2 step adds an action not in L1 that is unnecessary, confusing or counterproductive.",
            ),
            (
                "Redundant repetition",
                "An L2 step repeats earlier L2 steps where no such repetition exists in L1.",
            ),
        ],
    ),
]

ACCEPTABLE = [
    "Minor differences in tone, phrasing, or level of detail.",
    "Differences in emphasis or ordering that do not affect the outcome.",
    "Additional steps that are neutral or practical.",
    "Reasonable implicit equivalence, where an omitted action is implied by another step.",
]

CRITICAL_EXAMPLES = [
    (
        "Prepare Indian-style red lentil dhal for 8 portions using an oven and skillet.",
        "L1 soaks the lentils for 8 hours; L2 soaks them for only 30 minutes.",
        "A critical difference in time: the lentils will not be ready.",
    ),
    (
        "Construct a traditional wooden Jacob's Ladder toy.",
        "L2 cuts the wood into 5 equal pieces, then arranges them “from largest to smallest”.",
        "Internal inconsistency: equal pieces have no largest or smallest.",
    ),
    (
        "Treat head lice with a tea tree oil and apple cider vinegar solution.",
        "L2's last step repeats the shampooing step almost verbatim.",
        "Redundant repetition not present in L1.",
    ),
    (
        "Prepare an alkyl chloride from an alcohol using thionyl chloride.",
        "L2 adds the drying agent before heating; L1 uses it at the very end.",
        "A step in the wrong place that changes the outcome.",
    ),
    (
        "Housebreak a Bichon Frise to use the outdoor bathroom spot.",
        "L2 never praises the dog after it uses the outdoor spot.",
        "Missing critical action: the positive reinforcement that makes L1 work.",
    ),
]

ACCEPTABLE_EXAMPLES = [
    (
        "Prepare Ambrosia fruit dip.",
        "L2 adds a final “store leftovers” step.",
        "An extra practical step that does not hurt.",
    ),
    (
        "Prepare a package for shipping.",
        "L2 omits removing old labels.",
        "Reasonable to assume a new box without old labels.",
    ),
    (
        "Clean and protect car wheels for their finish.",
        "L2 follows the manufacturer's recommendations instead of “identify the finish”.",
        "A reasonable equivalent.",
    ),
    (
        "Make terra cotta pots as baby shower favors.",
        "L2 writes a different word on the muslin bags.",
        "A trivial difference.",
    ),
    (
        "Do a basic sitting meditation.",
        "L2 sits on a chair instead of cross-legged.",
        "Both are valid positions for the goal.",
    ),
    (
        "Take sharp photos of moving subjects in Shutter Priority mode.",
        "L2 simplifies but keeps every essential action.",
        "Not a failure; vague terms like “appropriate value” would be.",
    ),
]

CODEBOOK = {
    "definition": DEFINITION,
    "question": QUESTION,
    "l1_note": L1_NOTE,
    "kinds": KINDS,
    "acceptable": ACCEPTABLE,
    "critical_examples": CRITICAL_EXAMPLES,
    "acceptable_examples": ACCEPTABLE_EXAMPLES,
}
