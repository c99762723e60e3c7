"""``flynn bench turn --mcp-servers``: the turns are timed with the servers' tools on offer, and a
killed server's notice and recovery are measured."""

from __future__ import annotations

from evals.turn import bench_turn


async def test_bench_turn_offers_mcp_tools_and_times_a_servers_recovery() -> None:
    result = await bench_turn(messages=20, facts=5, turns=3, mcp_servers=2, mcp_tools=5)
    assert (result["mcp_servers"], result["mcp_tools"]) == (2, 5)
    noticed, recovered = result["mcp_dead_noticed_ms"], result["mcp_dead_recovered_ms"]
    assert isinstance(noticed, float) and isinstance(recovered, float)
    assert 0 < noticed < recovered
    assert recovered >= 1000 * float(str(result["mcp_restart_backoff_s"]))
