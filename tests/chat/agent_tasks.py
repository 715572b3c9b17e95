"""Waiting for the agent turns a test started, so it can read their result and close its event loop cleanly."""

import asyncio

from chat import state_machine


async def wait_for_agent_turns(timeout: float = 10.0) -> None:
    """Wait until the agent turns running on this event loop are done; cancel what is left at ``timeout``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while tasks := [t for t in state_machine._agent_tasks if t.get_loop() is loop and not t.done()]:
        remaining = deadline - loop.time()
        if remaining <= 0:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            return
        await asyncio.wait(tasks, timeout=remaining)
