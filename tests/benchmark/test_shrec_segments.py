"""Segments from two annotators' spans: groups, agreed segments, None segments (spec SH-4, SH-5, SH-A2)."""

from benchmark.shrec.dataset import dataset_statistics
from benchmark.shrec.records import AnnotatorSpans, EpisodeRecord, SpanRecord, TurnRecord
from benchmark.shrec.segments import SegmentOptions, episode_segments, merged_gaps

from .shrec_data import AGENT, sh_a1_episode, span, timed_turns


def test_groups_follow_the_pairing_with_the_first_element_in_front():
    segments = episode_segments(sh_a1_episode(), SegmentOptions())
    assert [s.span_ids for s in segments.groups] == [("A1", "B1"), ("A2", "B2"), ("A3",), ("B3",)]
    assert [s.key for s in segments.groups] == ["video:1", "video:2", "video:3", "video:4"]
    assert [s.label for s in segments.groups] == ["error", "competency", "competency", "competency"]
    assert [s.key for s in segments.agreed] == ["video:1"]
    assert segments.groups[3].annotators == ("external 2",)
    assert segments.pairing == {"spans": 6, "pairs": 2, "agreed": 1}


def test_sh_a2_gaps_of_the_merged_union_up_to_the_last_first_element():
    segments = episode_segments(sh_a1_episode(), SegmentOptions())
    assert segments.gaps == [(10, 20), (35, 50), (60, 80)]


def test_sh_a2_balance_n_keeps_one_none_and_one_agreed_segment():
    detection = episode_segments(sh_a1_episode(), SegmentOptions()).detection
    assert sorted(s.label for s in detection) == ["error", "none"]
    none = next(s for s in detection if s.label == "none")
    assert (none.start_s, none.end_s) in [(10, 20), (35, 50), (60, 80)]


def test_sh_a2_upstream_balance_gives_nothing_from_a_video_with_one_agreed_segment():
    assert episode_segments(sh_a1_episode(), SegmentOptions(balance="n-1")).detection == []


def test_attribute_policies_of_an_agreed_pair():
    def attributes(policy):
        return episode_segments(sh_a1_episode(), SegmentOptions(attributes=policy)).agreed[0].attributes

    assert attributes("first") == ("emotions",)
    assert attributes("or") == ("emotions", "intention")
    assert attributes("and") == ("emotions",)


def test_a_none_excerpt_inside_an_annotated_excerpt_is_dropped():
    # span+3 excerpts of the agreed segment cover the 10-20 s gap's turns: no None segment survives.
    segments = episode_segments(sh_a1_episode(), SegmentOptions(excerpt="span+3", seed=0))
    kept = [s for s in segments.detection if s.label == "none"]
    agreed_text = segments.agreed[0].excerpt.text
    assert all(s.excerpt.text not in agreed_text for s in kept)
    assert len(segments.detection) == 2 * len(kept)


def test_merged_gaps_merge_touching_spans_and_stop_at_the_limit():
    assert merged_gaps([(0, 5), (5, 8), (12, 30)], 20) == [(8, 12)]
    assert merged_gaps([(3, 4)], 10) == [(0, 3), (4, 10)]


def test_turn_spans_pair_by_iou_over_turns():
    turns = [TurnRecord(i, i % 2, f"Seat {i % 2}", f"Turn {i}.") for i in range(8)]
    first = AnnotatorSpans("ann", (SpanRecord(1, "error", 2, 3, attributes=("emotions",)),))
    second = AnnotatorSpans("bob", (SpanRecord(2, "error", 2, 4), SpanRecord(3, "competency", 6, 6)))
    episode = EpisodeRecord("parley-1", turns, [first, second], agent_seat=0)
    segments = episode_segments(episode, SegmentOptions())
    assert [s.span_ids for s in segments.groups] == [(1, 2), (3,)]
    # Turns 0-1 and 5 are unmarked, up to the first elements' last turn (6); one agreed segment, one None kept.
    assert segments.gaps == [(0, 2), (5, 6)]
    [none] = [s for s in segments.detection if s.label == "none"]
    assert (none.start_turn, none.end_turn, none.start_s) in [(0, 1, None), (5, 5, None)]


def test_an_annotator_who_marked_nothing_is_passed_over():
    episode = sh_a1_episode()
    episode.annotators.insert(0, AnnotatorSpans("external 0", ()))
    segments = episode_segments(episode, SegmentOptions())
    assert segments.groups[0].annotators == ("external 1", "external 2")


def test_all_pairs_pairs_every_two_annotators():
    episode = sh_a1_episode()
    episode.annotators.append(AnnotatorSpans("external 3", (span("C1", 0, 11, "error"),)))
    keys = [s.key for s in episode_segments(episode, SegmentOptions(annotators="all_pairs")).agreed]
    assert keys == ["video:1.1", "video:2.1", "video:3.1"]


def test_dataset_statistics_count_what_the_pairing_used():
    episode = sh_a1_episode()
    segments = {episode.key: episode_segments(episode, SegmentOptions())}
    statistics = dataset_statistics([episode], segments)
    overall = statistics["overall"]
    assert statistics["pairing"] == "shrec" and list(statistics["by_source"]) == ["empathic"]
    counts = [overall[key] for key in ("annotations", "paired_annotations", "pairs", "agreed_pairs")]
    assert counts == [6, 4, 2, 1]
    assert overall["videos"] == 1 and overall["annotators"] == 2
    assert overall["labels"] == {"error": 3, "competency": 3}
    assert overall["channels"] == {"verbal": 6, "non-verbal": 0, "both": 0, "": 0}
    assert overall["attributes"]["emotions"] == 2 and overall["attributes"]["intention"] == 1
    assert overall["agreed_attribute_counts"] == [1]
    assert statistics["by_source"]["empathic"] == overall


def test_a_none_excerpt_showing_a_singleton_is_dropped_too():
    # The gap [10, 11] cuts as the pair of turns 1-2, which is what A2, marked by one annotator only, shows.
    first = AnnotatorSpans("external 1", (span("A1", 0, 10, "error"), span("A2", 11, 14, "competency")))
    second = AnnotatorSpans("external 2", (span("B1", 1, 9, "error"),))
    episode = EpisodeRecord("video", timed_turns(), [first, second], agent_seat=AGENT)
    segments = episode_segments(episode, SegmentOptions())
    assert segments.gaps == [(10, 11)] and len(segments.agreed) == 1
    assert segments.groups[1].excerpt.first_turn == 1
    assert segments.detection == []
