"""Models answering SHREC task items (SH-8): through the real litellm path, cached, forced, coerced, stopped."""

from io import StringIO

import pytest
from asgiref.sync import async_to_sync
from django.core.management import CommandError, call_command

from benchmark.models import Job, Respondent, TaskAnswer, TaskItem
from benchmark.shrec import running
from benchmark.shrec.prompts import prompt_version
from tests.benchmark.shrec_items import make_task_set
from tests.fake_llm import FAKE_MODEL

pytestmark = pytest.mark.django_db
# Chunks run inline (PARLEY_TASKS_IMMEDIATE) when the command's transaction commits: tests of the
# command need committed rows.
queued = pytest.mark.django_db(transaction=True, serialized_rollback=True)

PROMPT_MARK = "Among the numbered explanations"
DETECTION_MARK = "Decide whether, in this conversation"


@pytest.fixture(autouse=True)
def judge_model(settings):
    settings.PARLEY_MODELS = {"agent": "", "partner": "", "judge": FAKE_MODEL, "neutralizer": ""}


def answer(ids, **run):
    return async_to_sync(running.answer_items)(ids, running.RunSettings(**{"model": FAKE_MODEL, **run}))


def items(task_set, task="rationale"):
    return list(task_set.items.filter(task=task).order_by("item_key"))


def test_a_model_answers_through_litellm_and_the_reply_is_parsed(fake_llm):
    task_set = make_task_set()
    fake_llm.reply_when(PROMPT_MARK, "The robot jokes at a sad moment.\nAnswer: (3)")
    fake_llm.reply_when(DETECTION_MARK, "I am not sure.")
    ids = [item.pk for item in task_set.items.all()]

    outcomes = answer(ids)

    assert [o.outcome for o in outcomes] == ["answered"] * 3
    stored = {a.item.item_key: a for a in TaskAnswer.objects.select_related("item", "respondent")}
    assert stored["v1:E0"].answer == 3 and stored["v1:E0"].reply.endswith("Answer: (3)")
    assert stored["v1:D0"].answer is None and stored["v1:D0"].reply == "I am not sure."
    assert stored["v1:E0"].respondent.kind == Respondent.Kind.JUDGE
    assert stored["v1:E0"].respondent.prompt_version == prompt_version("rationale")
    assert stored["v1:D0"].respondent.prompt_version == prompt_version("detection")
    assert stored["v1:E0"].prompt_tokens is not None and stored["v1:E0"].latency_ms is not None
    assert {r["temperature"] for r in fake_llm.requests} == {0}
    assert all(r["model"] == "fake-model" for r in fake_llm.requests)


def test_the_prompt_shows_the_options_in_stored_order_and_not_the_answer(fake_llm):
    task_set = make_task_set(rationale_items=1, detection_items=0)
    fake_llm.reply_when(PROMPT_MARK, "Answer: (3)")
    answer([items(task_set)[0].pk])
    prompt = fake_llm.prompts[0]
    item = items(task_set)[0]
    positions = [prompt.index(f"({n}) {text}") for n, text in enumerate(item.options, start=1)]
    assert positions == sorted(positions)
    assert "Answer: (3)" not in prompt and "gold" not in prompt.lower()


def test_answered_items_are_cached_and_force_asks_again(fake_llm):
    task_set = make_task_set(detection_items=0)
    ids = [item.pk for item in items(task_set)]
    fake_llm.reply_when(PROMPT_MARK, "Answer: (1)")
    answer(ids)
    fake_llm.reset()

    outcomes = answer(ids)
    assert [o.outcome for o in outcomes] == ["cached", "cached"] and fake_llm.requests == []

    fake_llm.reply_when(PROMPT_MARK, "Answer: (2)")
    outcomes = answer(ids, force=True)
    assert [o.outcome for o in outcomes] == ["answered", "answered"] and len(fake_llm.requests) == 2
    assert sorted(TaskAnswer.objects.values_list("answer", flat=True)) == [2, 2]


def test_each_variant_and_temperature_is_answered_apart(fake_llm):
    task_set = make_task_set(rationale_items=1, detection_items=0)
    ids = [items(task_set)[0].pk]
    fake_llm.reply_when(PROMPT_MARK, "Answer: (3)")
    answer(ids)
    answer(ids, variant="cot")
    answer(ids, temperature=0.7)
    assert TaskAnswer.objects.count() == 3
    labels = Respondent.objects.filter(model=FAKE_MODEL).values_list("label", flat=True)
    assert sorted(labels) == ["", "temperature 0.7"]
    assert "step by step" in fake_llm.prompts[1] and fake_llm.requests[2]["temperature"] == 0.7


def test_few_shot_shows_other_items_of_the_task_set_with_their_answers(fake_llm):
    task_set = make_task_set(rationale_items=3, detection_items=1)
    target = items(task_set)[0]
    fake_llm.reply_when(PROMPT_MARK, "Answer: (3)")
    answer([target.pk], variant="few-shot", examples=2)
    prompt = fake_llm.prompts[0]
    assert prompt.count("Example ") == 2 and "Answer: (3)" in prompt
    assert "My cat died last week (0)" in prompt.split("Now the question to answer.")[1]
    assert "(0)" not in prompt.split("Now the question to answer.")[0]
    assert "Sorry, I did not catch that" not in prompt  # the detection item is another task


def test_coercion_is_stored_beside_the_parsed_answer(fake_llm, settings):
    task_set = make_task_set(rationale_items=1, detection_items=0)
    ids = [items(task_set)[0].pk]
    fake_llm.reply_when("You restate another model's reply", "Answer: (3)")
    fake_llm.reply_when(PROMPT_MARK, "The one about the cheerful joke, I would say.")
    answer(ids, coerce_model=FAKE_MODEL)
    stored = TaskAnswer.objects.get()
    assert stored.answer is None and stored.coerced == 3 and stored.coerced_by == FAKE_MODEL


def test_a_cached_answer_is_only_coerced_when_a_coercing_model_is_new(fake_llm):
    task_set = make_task_set(rationale_items=1, detection_items=0)
    ids = [items(task_set)[0].pk]
    fake_llm.reply_when("You restate another model's reply", "Answer: (3)")
    fake_llm.reply_when(PROMPT_MARK, "Answer: (3)")
    answer(ids)
    fake_llm.reset()
    fake_llm.reply_when("You restate another model's reply", "Answer: (3)")
    outcomes = answer(ids, coerce_model=FAKE_MODEL)
    assert outcomes[0].outcome == "cached" and len(fake_llm.requests) == 1
    assert TaskAnswer.objects.get().coerced == 3


def test_a_model_that_cannot_be_reached_stops_at_the_first_item(fake_llm, settings):
    settings.PARLEY_LLM_MAX_RETRIES = 0
    task_set = make_task_set()
    for _ in range(10):
        fake_llm.enqueue(status=503)
    with pytest.raises(running.ModelUnreachable, match="unavailable"):
        answer([item.pk for item in task_set.items.all()], concurrency=4)
    assert len(fake_llm.requests) == 1 and not TaskAnswer.objects.exists()


def test_refused_credentials_stop_the_run_even_after_a_success(fake_llm):
    task_set = make_task_set(rationale_items=3, detection_items=0)
    fake_llm.enqueue(text="Answer: (3)")
    fake_llm.enqueue(status=401)
    with pytest.raises(running.ModelUnreachable, match="rejected the request"):
        answer([item.pk for item in items(task_set)], concurrency=1)
    assert TaskAnswer.objects.count() == 1


def test_after_a_success_an_unreachable_call_fails_its_item_only(fake_llm, settings):
    settings.PARLEY_LLM_MAX_RETRIES = 0
    task_set = make_task_set(rationale_items=2, detection_items=0)
    fake_llm.enqueue(text="Answer: (3)")
    fake_llm.enqueue(status=503)
    outcomes = answer([item.pk for item in items(task_set)])
    assert [o.outcome for o in outcomes] == ["answered", "failed"] and "unavailable" in outcomes[1].error


def test_the_scripted_answerer_calls_no_model(fake_llm):
    task_set = make_task_set()
    outcomes = answer([item.pk for item in task_set.items.all()], model="scripted")
    assert [o.outcome for o in outcomes] == ["answered"] * 3 and fake_llm.requests == []
    detection = TaskAnswer.objects.get(item__task="detection")
    assert detection.answer == "error" and detection.reply == "Answer: (B)"
    assert detection.respondent.model == "scripted" and detection.latency_ms is None


def test_subset_and_task_selection():
    task_set = make_task_set(rationale_items=2, detection_items=1)
    keys = lambda ids: sorted(TaskItem.objects.filter(pk__in=ids).values_list("item_key", flat=True))  # noqa: E731
    assert keys(running.select_items(task_set, ["rationale"])) == ["v1:E0", "v1:E1"]
    assert keys(running.select_items(task_set, running.parse_tasks("all"), subset=0)) == ["v1:D0", "v1:E0"]
    assert keys(running.select_items(task_set, ["rationale"], subset=1)) == ["v1:E1"]
    with pytest.raises(ValueError, match="unknown task 'ranking'"):
        running.parse_tasks("pre,ranking")


# --- the command -------------------------------------------------------------------------------


def evaluate(*args):
    out, err = StringIO(), StringIO()
    call_command("evaluate", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


@queued
def test_the_command_queues_chunks_and_prints_a_summary(fake_llm, monkeypatch):
    monkeypatch.setattr(running, "CHUNK_SIZE", 2)
    task_set = make_task_set(rationale_items=3, detection_items=1)
    fake_llm.reply_when(PROMPT_MARK, "Answer: (3)")
    fake_llm.reply_when(DETECTION_MARK, "Answer: (B)")

    out, err = evaluate("--shrec", "all", "--models", f"{FAKE_MODEL},scripted", "--task-set", task_set.name)

    summary = "(zero-shot): 4 of 4 item(s) answered (0 cached), 0 of them unparsed; 0 without an answer."
    assert f"{FAKE_MODEL} {summary}" in out
    assert "scripted (zero-shot): 4 of 4 item(s) answered (0 cached)" in out
    assert Job.objects.filter(task="answer_shrec_items", status=Job.Status.FINISHED).count() == 4
    assert "shrec" in err and "4/4" in err
    assert TaskAnswer.objects.filter(respondent__model=FAKE_MODEL, answer__isnull=False).count() == 4

    fake_llm.reset()
    out, _ = evaluate("--shrec", "rationale", "--models", FAKE_MODEL, "--subset", "0")
    assert "2 of 2 item(s) answered (2 cached)" in out and fake_llm.requests == []


@queued
def test_the_command_stops_at_the_first_chunk_when_the_model_cannot_be_reached(fake_llm, settings, monkeypatch):
    monkeypatch.setattr(running, "CHUNK_SIZE", 1)
    settings.PARLEY_LLM_MAX_RETRIES = 0
    make_task_set(rationale_items=3, detection_items=0)
    for _ in range(10):
        fake_llm.enqueue(status=503)

    with pytest.raises(CommandError, match=rf"{FAKE_MODEL}: the run stopped at its first chunk: .*unavailable"):
        evaluate("--shrec", "rationale", "--models", FAKE_MODEL)

    assert len(fake_llm.requests) == 1 and Job.objects.filter(task="answer_shrec_items").count() == 1


def test_the_command_refuses_bad_options():
    make_task_set()
    with pytest.raises(CommandError, match="unknown task 'ranking'"):
        evaluate("--shrec", "ranking", "--models", "scripted")
    with pytest.raises(CommandError, match="no task set named 'nope'"):
        evaluate("--shrec", "all", "--models", "scripted", "--task-set", "nope")
    with pytest.raises(CommandError, match="has no items of pre in subset 0"):
        evaluate("--shrec", "pre", "--models", "scripted", "--subset", "0")
    with pytest.raises(CommandError, match="not episodes"):
        evaluate("--shrec", "all", "--models", "scripted", "--tag", "x")
    with pytest.raises(CommandError, match="apply only with --shrec"):
        evaluate("--variant", "cot")
    with pytest.raises(CommandError, match="--coerce-model: Model 'elsewhere/model' is not one"):
        evaluate("--shrec", "all", "--models", "scripted", "--coerce-model", "elsewhere/model")


@queued
def test_a_consumer_process_answers_the_chunks_while_the_command_follows(queue, consumers, monkeypatch):
    monkeypatch.setattr(running, "CHUNK_SIZE", 2)
    task_set = make_task_set(rationale_items=3, detection_items=1)
    consumers.start(workers=2)

    out, _ = evaluate("--shrec", "all", "--models", "scripted", "--task-set", task_set.name)

    assert "scripted (zero-shot): 4 of 4 item(s) answered (0 cached), 0 of them unparsed; 0 without an answer." in out
    jobs = Job.objects.filter(task="answer_shrec_items")
    assert jobs.count() == 2 and {job.status for job in jobs} == {Job.Status.FINISHED}
    assert all(job.worker for job in jobs)  # taken by the consumer, not run inline
