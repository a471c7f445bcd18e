"""Study form types, one module each, registered by name (:mod:`.registry`): the
critical-failure form (seed 000), rating scales, the CustomPlans two-question form, pairwise
preference and solve mode. The contract is :class:`.base.FormType`."""
