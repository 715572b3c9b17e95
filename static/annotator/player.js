// The episode's recording beside the transcript (templates/annotator/item.html): the turn being spoken
// is highlighted as the recording plays, and a turn's time (a button before its speaker) seeks there.
import { timedTurns } from "./turn_times.js";

const media = document.querySelector("[data-player] [data-player-media]");
const source = document.querySelector(".transcript");

if (media && source) {
  const turns = timedTurns(source);
  let speaking = null;

  function follow() {
    const now = media.currentTime;
    const turn = turns.filter((candidate) => candidate.start <= now && now < Math.max(candidate.end, candidate.start + 0.05)).pop() || null;
    if (turn === speaking) return;
    speaking?.element.classList.remove("turn--speaking");
    turn?.element.classList.add("turn--speaking");
    speaking = turn;
    // Keep the spoken turn in view while playing, but never move the page under a reader who paused.
    if (turn && !media.paused) turn.element.scrollIntoView({ block: "nearest" });
  }

  media.addEventListener("timeupdate", follow);
  media.addEventListener("seeked", follow);
  document.addEventListener("click", (event) => {
    const button = event.target.closest?.("[data-seek]");
    if (!button) return;
    media.currentTime = Number(button.dataset.seek);
    follow();
  });
}
