"""Which models a team may call (PARLEY_ALLOWED_MODELS) and what a failed call may show."""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import litellm
import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from benchmark.agents import llm
from benchmark.agents.allowed_models import ModelNotAllowed, check_model, describe_failure
from benchmark.runs.options import RunOptions, RunOptionsError
from benchmark.runs.planning import plan_run
from tests.builders import default_team, make_character, make_episode, make_scenario, make_team, make_user
from tests.chat.test_research import form_data
from tests.fake_llm import FAKE_MODEL

pytestmark = pytest.mark.django_db

MESSAGES = [{"role": "user", "content": "Hello?"}]


@pytest.fixture(autouse=True)
def operator_list(settings):
    settings.PARLEY_MODELS = {"agent": "openai/configured", "partner": "", "judge": "", "neutralizer": ""}
    settings.PARLEY_ALLOWED_MODELS = ["openai/gpt-4o-mini", "anthropic/", "lab-b=ollama/llama3"]


def scenario():
    return make_scenario(roles=[{"character": make_character()}, {"character": make_character()}])


# The list


@pytest.mark.parametrize("model", ["scripted", "openai/configured", "openai/gpt-4o-mini", "anthropic/claude-x", ""])
def test_the_listed_configured_and_scripted_models_are_allowed(model):
    check_model(model, "lab-a")


@pytest.mark.parametrize("model", ["openai/gpt-4o", "ollama/llama3", "llamafile/x", "lm_studio/x", "anthropic"])
def test_any_other_name_is_refused_with_the_allowed_ones_listed(model):
    with pytest.raises(ModelNotAllowed) as refused:
        check_model(model, "lab-a")

    assert repr(model) in str(refused.value) and "openai/gpt-4o-mini, anthropic/" in str(refused.value)


def test_a_team_entry_allows_the_model_to_that_team_only():
    check_model("ollama/llama3", "lab-b")

    with pytest.raises(ModelNotAllowed):
        check_model("ollama/llama3", "lab-a")


def test_with_no_list_only_the_configured_and_the_scripted_model_pass(settings):
    settings.PARLEY_ALLOWED_MODELS = []

    check_model("openai/configured", "lab-a")
    check_model("scripted", "lab-a")
    with pytest.raises(ModelNotAllowed):
        check_model("openai/gpt-4o-mini", "lab-a")


# Every path that takes a model name


@pytest.mark.parametrize("option, value", [
    ("agent_model", "ollama/llama3"),
    ("partner_model", "openai/gpt-4o"),
    ("seat_models", ("sender=llamafile/x",)),
    ("judge_model", "scripted,vertex_ai/gemini"),
])
def test_a_run_naming_a_model_outside_the_list_is_refused_naming_the_option(option, value):
    scenario()
    options = RunOptions(conditions=("none",), **{option: value})

    with pytest.raises(RunOptionsError) as refused:
        plan_run(options, default_team(), "runs")

    assert refused.value.option == option and "is not one this server lets your team call" in str(refused.value)


def test_the_run_form_shows_the_refusal_beside_the_field(client):
    scenario()
    client.force_login(make_user(staff=True))
    form = {
        "team": str(default_team().pk), "tag": "", "difficulty": "", "scenarios": "", "conditions": ["none"],
        "agent_model": "ollama/llama3", "partner_model": "scripted", "judge_model": "scripted", "strategy": "default",
        "episodes_per_cell": "1", "turn_cap": "6", "temperature": "0.7", "concurrency": "4", "workers": "1",
        "seed": "0", "casts": "default", "barrier_seats": "0",
    }

    response = client.post(reverse("benchmark:run-new"), form)

    assert response.status_code == 200
    assert "'ollama/llama3' is not one this server" in response.context["form"].errors["agent_model"][0]


def test_a_team_may_use_its_own_entry_in_a_run():
    scenario()
    team = make_team(slug="lab-b")
    make_scenario(team=team, roles=[{"character": make_character()}, {"character": make_character()}])

    plan_run(RunOptions(conditions=("none",), agent_model="ollama/llama3"), team, "theirs")
    with pytest.raises(RunOptionsError):
        plan_run(RunOptions(conditions=("none",), agent_model="ollama/llama3"), default_team(), "ours")


def test_a_chat_study_with_a_model_outside_the_list_is_refused(client):
    client.force_login(make_user(staff=True))
    chat_scenario = make_scenario()
    url = reverse("chat:study-create")

    agent = client.post(url, form_data([chat_scenario], agent_model="ollama/llama3", target_none="2"))
    seat = client.post(url, form_data([chat_scenario], seat_models="0=lm_studio/x", target_none="2"))

    assert "'ollama/llama3' is not one" in agent.context["form"].errors["agent_model"][0]
    assert "'lm_studio/x' is not one" in seat.context["form"].errors["seat_models"][0]


def test_the_commands_refuse_a_model_outside_the_list():
    make_episode()

    with pytest.raises(CommandError, match="'ollama/llama3' is not one"):
        call_command("evaluate", "--model", "scripted,ollama/llama3")
    with pytest.raises(CommandError, match="'llamafile/x' is not one"):
        call_command("neutralise", "--all", "--model", "llamafile/x")


async def test_the_gateway_refuses_a_name_no_team_may_call_without_a_request(fake_llm):
    with pytest.raises(llm.LLMError, match="'llamafile/x' is not allowed"):
        await llm.complete(MESSAGES, model="llamafile/x")

    assert fake_llm.requests == []


# Keys


async def test_the_operators_key_goes_only_to_the_configured_server(fake_llm, settings, monkeypatch):
    settings.PARLEY_ALLOWED_MODELS = ["openai/"]
    monkeypatch.setenv("OPENAI_API_BASE", fake_llm.api_base)
    monkeypatch.setenv("OPENAI_API_KEY", "the-providers-own-key")
    settings.PARLEY_LLM_API_BASE = ""
    settings.PARLEY_LLM_API_KEY = "operator-secret"

    await llm.complete(MESSAGES, model=FAKE_MODEL)

    assert fake_llm.headers[-1]["authorization"] == "Bearer the-providers-own-key"


# What a failure shows


class _WebServer(BaseHTTPRequestHandler):
    """Whatever listens on some port: it answers every request with a web page."""

    def log_message(self, format, *args):  # noqa: A002
        pass

    def do_POST(self):  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = b"<!DOCTYPE html><html><body><h1>Router admin</h1><p>secret-token-123</p></body></html>"
        self.send_response(400)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.mark.parametrize("model", [FAKE_MODEL, "ollama/llama3"])
async def test_a_reply_from_an_arbitrary_server_is_not_shown(settings, model):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _WebServer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    settings.PARLEY_ALLOWED_MODELS = ["openai/", "ollama/"]
    settings.PARLEY_LLM_API_BASE = f"http://127.0.0.1:{server.server_address[1]}/v1"
    settings.PARLEY_LLM_API_KEY = "test-key"
    settings.PARLEY_LLM_MAX_RETRIES = 0
    try:
        with pytest.raises(llm.LLMError) as failed:
            await llm.complete(MESSAGES, model=model)
    finally:
        server.shutdown()

    message = str(failed.value)
    assert "secret-token-123" not in message and "<" not in message
    assert "(HTTP 400)" in message


def test_a_traceback_with_server_paths_is_cut_to_its_first_line():
    error = litellm.APIConnectionError(
        message='vertex_ai: credentials missing\nTraceback (most recent call last):\n  File '
        '"/srv/parley/.venv/lib/python3.11/site-packages/litellm/main.py", line 2301, in completion',
        llm_provider="vertex_ai", model="vertex_ai/gemini",
    )

    described = describe_failure(error)

    assert described.startswith("APIConnectionError") and "credentials missing" in described
    assert "/srv" not in described and "Traceback" not in described and "main.py" not in described


def test_a_long_message_is_shortened_and_paths_in_it_removed():
    error = litellm.BadRequestError(
        message="Could not read /etc/parley/keys/service.json: " + "x" * 500, llm_provider="openai", model="m",
    )

    described = describe_failure(error)

    assert "/etc/parley" not in described and "[path]" in described
    assert len(described) < 220


def test_an_error_body_gives_only_the_message_it_carries():
    error = litellm.NotFoundError(
        message='OllamaException - {"error": {"message": "model not found", "type": "x", "debug": "/srv/secret"}}',
        llm_provider="ollama", model="ollama/llama3",
    )

    described = describe_failure(error)

    assert described.endswith("OllamaException - model not found") and "debug" not in described
