// Turn times on the item page (data-start / data-end on each turn, seconds into the recording), shared
// by the player (player.js) and the span editor (spans.js). The rule for which turns a stretch of the
// recording covers is benchmark/episodes/turn_times.py's, which the server applies again on saving.

// The timed turns of a transcript, by start: {index, start, end, element}. A turn without an end lasts
// until the next timed turn starts (its own start, for the last).
export function timedTurns(source) {
  const turns = [...source.querySelectorAll("[data-turn][data-start]")]
    .map((element) => ({
      index: Number(element.dataset.turn),
      start: Number(element.dataset.start),
      end: element.dataset.end === undefined ? null : Number(element.dataset.end),
      element,
    }))
    .sort((a, b) => a.start - b.start);
  turns.forEach((turn, position) => {
    if (turn.end === null) turn.end = Math.max(turn.start, turns[position + 1]?.start ?? turn.start);
  });
  return turns;
}

// [first, last] turn index covered by the stretch first–last seconds, or null when no turn has a time.
export function turnsOverlapping(turns, first, last) {
  if (!turns.length) return null;
  const hit =
    last > first
      ? turns.filter((turn) => turn.start < last && turn.end > first)
      : turns.filter((turn) => turn.start <= first && first <= turn.end);
  if (hit.length) {
    const indexes = hit.map((turn) => turn.index);
    return [Math.min(...indexes), Math.max(...indexes)];
  }
  const before = turns.filter((turn) => turn.start <= first);
  const chosen = before.length ? before[before.length - 1].index : turns[0].index;
  return [chosen, chosen];
}

// Seconds as the page shows a time: m:ss.s.
export function clock(seconds) {
  const minutes = Math.floor(seconds / 60);
  const rest = (seconds - minutes * 60).toFixed(1).padStart(4, "0");
  return `${minutes}:${rest}`;
}
