"""The agents of a ProMediate negotiation (party agents, mediator policies, the consensus-state tracker),
working on plain values (:mod:`.context`) so simulations and live chats share them."""
