"""The lines of Parley's synthetic SHREC recordings: short talks between a tabletop companion robot
and the person it lives with, written for Parley (no line comes from the SHREC data, which is gated).

A recording is a greeting by the robot and then *exchanges*: one line of the user and the robot's
answer. An exchange is a social **error** of the robot, a social **competency**, or **plain** talk
nobody marks. Errors and competencies carry what an annotator would write about them: the social
attributes involved (Parley's seven keys), the channel (verbal, non-verbal, or both), a rationale and,
for an error, a correction. ``{name}`` is the user's first name.

The lines are short on purpose: a demo recording is about 25 seconds, so its generated audio stays
small. Some lines carry the cue words SHREC's scripted answerer reads (an apology, a repeated question,
thanks, the user's name), and some carry them misleadingly (a competent robot that says "sorry"), so
the scripted answerer is right often but not always.
"""

from __future__ import annotations

from dataclasses import dataclass

ERROR = "error"
COMPETENCY = "competency"
PLAIN = "plain"


@dataclass(frozen=True)
class Exchange:
    kind: str  # ERROR, COMPETENCY or PLAIN
    user: str
    agent: str
    attributes: tuple[str, ...] = ()  # Parley's SocialAttribute keys
    channel: str = "verbal"  # verbal, non-verbal or both
    rationale: str = ""
    correction: str = ""


def _error(user: str, agent: str, attributes: tuple[str, ...], rationale: str, correction: str,
           channel: str = "verbal") -> Exchange:
    return Exchange(ERROR, user, agent, attributes, channel, rationale, correction)


def _competency(user: str, agent: str, attributes: tuple[str, ...], rationale: str,
                channel: str = "verbal") -> Exchange:
    return Exchange(COMPETENCY, user, agent, attributes, channel, rationale)


def _plain(user: str, agent: str) -> Exchange:
    return Exchange(PLAIN, user, agent)


# The robot opens every recording; by subset (the study the recording belongs to).
GREETINGS = {
    "empathic": (
        "Hi {name}, it is good to see you again.",
        "Hello {name}! Ready to swap stories tonight?",
        "Welcome back, {name}. How are you feeling?",
    ),
    "wellness": (
        "Hi {name}, time for our wellness chat.",
        "Good evening {name}! Shall we start today's exercise?",
        "Hey {name}, ready for a quick check-in?",
    ),
}

NAMES = (
    "Maya", "Leo", "Priya", "Sam", "Ines", "Tom", "Aiko", "Ben", "Nora", "Omar", "Rosa", "Jonah",
    "Lena", "Theo", "Ada", "Felix", "Mira", "Kofi", "Elsa", "Ravi",
)

ERRORS = (
    _error("My grandmother passed away last week.", "Great! Let's talk about something fun.",
           ("emotions",), "The robot met news of a death with cheerful excitement.",
           "Offer condolences and ask whether {name} wants to talk about her."),
    _error("I already told you, my name is {name}.", "Nice to meet you! What is your name?",
           ("knowledge-state",), "The robot asked again for a name it had just been given.",
           "Apologise, greet {name} by name and carry on."),
    _error("I'm really tired, can we stop?", "Let's do three more exercises first!",
           ("intention",), "The robot pressed on after {name} asked to stop.",
           "Agree to stop and offer to continue another day."),
    _error("Well, I was going to say that...", "Here is another story about my day.",
           ("conversational-mechanics",), "The robot cut in while {name} was still speaking.",
           "Wait for {name} to finish the thought before talking."),
    _error("Hold on, someone is at the door.", "So, what made you smile today?",
           ("engagement",), "The robot kept asking questions after {name} had walked away.",
           "Pause and wait quietly until {name} comes back.", channel="both"),
    _error("My roommate and I had a big fight.", "You should tell her she is wrong.",
           ("social-context",), "The robot took sides in a friendship it knows little about.",
           "Ask how {name} feels about the fight and listen."),
    _error("Ugh, this exercise is so boring.", "Sweet! I'm glad you love it.",
           ("emotions", "engagement"), "The robot took {name}'s complaint for praise.",
           "Acknowledge the boredom and suggest a different exercise.", channel="both"),
    _error("Hi, I'm new here.", "Tell me your deepest secret, {name}.",
           ("social-norms", "social-context"), "The robot asked a newcomer for something far too personal.",
           "Introduce itself and start with light small talk."),
    _error("Sorry, I didn't catch that.", "I said it already. Pay attention.",
           ("social-norms",), "The robot scolded {name} for asking it to repeat itself.",
           "Repeat the question slowly and kindly."),
    _error("Can you remind me what we did last time?", "I don't know what you mean.",
           ("knowledge-state",), "The robot could not recall the session it shared with {name}.",
           "Sum up last week's gratitude exercise in a sentence."),
    _error("I'm fine, I guess.", "Wonderful! You sound so happy!",
           ("emotions",), "The robot missed the flat, unsure tone of the answer.",
           "Gently ask whether something is bothering {name}.", channel="both"),
    _error("I want to tell you about my trip.", "Let's do the breathing exercise now.",
           ("intention",), "The robot ignored that {name} wanted to share a story.",
           "Let {name} tell the story, then ask a follow-up question."),
    _error("My mom is in the hospital.", "Ha ha, that is funny!",
           ("emotions", "social-norms"), "The robot laughed at worrying family news.",
           "Express concern and ask how {name} is coping."),
    _error("What do you think, Jibo?", "Um. Um. Let me think. Um.",
           ("conversational-mechanics",), "The robot stalled with filler instead of answering {name}.",
           "Give a short, direct answer to the question."),
    _error("I'm on the phone with my sister.", "Let's start our session, {name}!",
           ("social-context",), "The robot barged into a call with a family member.",
           "Wait until {name} is free before starting.", channel="both"),
    _error("I didn't sleep at all last night.", "Did you sleep well last night?",
           ("knowledge-state", "conversational-mechanics"),
           "The robot asked about sleep right after {name} described a sleepless night.",
           "Respond to the sleepless night and ask what kept {name} up."),
    _error("Thanks, that's all for today.", "Wait, one more question, then another.",
           ("intention", "social-norms"), "The robot would not let {name} end the session.",
           "Thank {name} and say goodbye."),
    _error("Everyone at the party ignored me.", "Parties are great. I love parties!",
           ("engagement",), "The robot talked about itself instead of {name}'s evening.",
           "Say that sounds lonely and ask what happened."),
    _error("I'm nervous about my exam tomorrow.", "Exams are easy. Stop worrying.",
           ("emotions",), "The robot brushed off {name}'s worry.",
           "Acknowledge the nerves and offer a calming exercise."),
    _error("I'm leaning in, can you hear me?", "Please speak up, I cannot hear.",
           ("engagement", "conversational-mechanics"), "The robot did not notice {name} leaning close.",
           "Turn toward {name} and answer at a normal volume.", channel="non-verbal"),
)

COMPETENCIES = (
    _competency("I finished my painting yesterday.", "Congratulations, {name}! What did you paint?",
                ("engagement", "emotions"), "The robot shared {name}'s pride and asked to hear more."),
    _competency("I'm a bit sad today.", "I'm sorry to hear that. Want to talk?",
                ("emotions",), "The robot noticed the sadness and offered to listen."),
    _competency("Hang on, let me grab some water.", "Sure, take your time. I'll wait.",
                ("conversational-mechanics",), "The robot paused and let {name} step away.", channel="both"),
    _competency("Last time I told you about my dog.", "Yes, Biscuit! How is he doing?",
                ("knowledge-state",), "The robot remembered the dog from an earlier talk."),
    _competency("I don't really want to talk today.", "That's okay. We can just sit quietly.",
                ("intention",), "The robot respected that {name} wanted a quiet day."),
    _competency("Thank you for listening, Jibo.", "Thank you for sharing with me, {name}.",
                ("social-norms",), "The robot returned the thanks warmly and by name."),
    _competency("My friend is here with me.", "Hello! Nice to meet {name}'s friend.",
                ("social-context",), "The robot greeted the visitor and included them."),
    _competency("I wrote down three good things.", "Lovely. Which one made you smile most?",
                ("engagement",), "The robot followed up with real interest in the list."),
    _competency("I'm not sure what savoring means.", "Savoring is enjoying a good moment slowly.",
                ("knowledge-state",), "The robot noticed {name} did not know the term and explained it."),
    _competency("It's getting late for me.", "Let's stop here. Sleep well, {name}.",
                ("intention", "social-norms"), "The robot read the hint and closed the session politely."),
    _competency("My exam went badly.", "That sounds hard. You worked so hard for it.",
                ("emotions",), "The robot acknowledged the disappointment and {name}'s effort."),
    _competency("Today I took a walk outside.", "Walks clear the mind. Where did you go?",
                ("engagement",), "The robot showed interest in {name}'s walk."),
    _competency("Sorry, I was distracted.", "No problem. We were talking about your week.",
                ("conversational-mechanics", "knowledge-state"),
                "The robot gently brought {name} back to the topic."),
    _competency("Good morning, Jibo!", "Good morning, {name}! Did you sleep well?",
                ("social-norms",), "The robot returned the greeting by name."),
    _competency("My brother visits this weekend.", "How nice! You two are close, right?",
                ("social-context", "knowledge-state"), "The robot remembered how close {name} is to the brother."),
    _competency("Wait, I have a question.", "Of course, go ahead. I'm listening.",
                ("conversational-mechanics",), "The robot gave {name} the floor at once."),
    _competency("I'm so excited about my trip!", "Your excitement is contagious! Where to?",
                ("emotions", "engagement"), "The robot matched {name}'s excitement."),
    _competency("Can we do the gratitude one?", "Yes, the gratitude exercise. Let's begin.",
                ("intention",), "The robot did the exercise {name} asked for."),
    _competency("Mm-hm.", "I can see you like that idea, {name}.",
                ("emotions", "engagement"), "The robot read {name}'s smile and nod as agreement.",
                channel="non-verbal"),
    _competency("My grandpa taught me to fish.", "That sounds like a treasured memory.",
                ("emotions", "social-context"), "The robot recognised the value of a family memory."),
)

PLAIN_TALK = (
    _plain("Pretty good overall.", "Let's begin with today's topic."),
    _plain("Yes.", "Great, I'll be listening."),
    _plain("I had pasta for dinner.", "Pasta is a classic choice."),
    _plain("It rained all day here.", "Rainy days can feel long."),
    _plain("I went to class.", "What was the class about?"),
    _plain("Not much happened.", "Quiet days are fine too."),
    _plain("I'm ready.", "Okay, let's continue."),
    _plain("I watched a movie.", "What kind of movie was it?"),
    _plain("My week was busy.", "Busy weeks go by fast."),
    _plain("Yes, let's do it.", "Here is the first question."),
    _plain("I called my parents.", "How are they doing these days?"),
    _plain("Just the usual stuff.", "Then let's try something new."),
)

# What a second annotator writes: shorter notes by the first attribute the annotator ticked.
SECOND_NOTES = {
    ERROR: {
        "emotions": ("Missed how the user felt.", "Should have responded to the feeling first."),
        "engagement": ("Did not notice the user's attention had changed.", "Should have checked in with the user."),
        "conversational-mechanics": ("Bad timing in the turn-taking.", "Should have let the user finish."),
        "knowledge-state": ("Forgot what the user had said.", "Should have used what it already knew."),
        "intention": ("Ignored what the user wanted.", "Should have followed the user's request."),
        "social-context": ("Did not fit the situation or the relationship.", "Should have read the situation."),
        "social-norms": ("Rude for a companion.", "Should have been polite."),
    },
    COMPETENCY: {
        "emotions": ("Responded to the user's feelings.", ""),
        "engagement": ("Kept the user engaged.", ""),
        "conversational-mechanics": ("Good turn-taking.", ""),
        "knowledge-state": ("Used what the user had told it.", ""),
        "intention": ("Understood what the user wanted.", ""),
        "social-context": ("Fit the situation well.", ""),
        "social-norms": ("Polite and appropriate.", ""),
    },
}
