"""An answer is about a target (``benchmark.instruments.targets``): the episode, a seat, a goal, and now
a turn or a span of turns (issue 22).

- ``Answer`` gains ``turn``, ``end_turn``, ``start_char`` and ``end_char`` (nullable; every stored
  answer keeps them empty, so it keeps its target: the episode, a seat or a goal).
- ``Question.scope`` gains ``turn`` (one answer per turn the question applies to) and ``span``
  (any number of span answers).
- The unique constraints say "once per episode / seat" only of answers without a turn, and add
  "once per turn"; check constraints keep a span's turns and characters in order and paired.
- The triggers (``benchmark.instruments.triggers``) compare the new columns too: the duplicate
  check takes the turn into account (spans are exempt), the scope check knows turns and spans.
  They are dropped first (SQLite copies ``benchmark_answer`` to add its check constraints) and
  installed at the end. Reversed, they are dropped and not put back: the triggers module reads
  the new columns, so a database migrated back below this one has no answer triggers until it
  is migrated forward again.
"""

from django.db import migrations, models

from benchmark.instruments import triggers


class Migration(migrations.Migration):

    dependencies = [
        ('benchmark', '0023_turn_features'),
    ]

    operations = [
        migrations.RunPython(triggers.uninstall_for_migration, migrations.RunPython.noop),
        migrations.AlterModelOptions(
            name='answer',
            options={'ordering': ['response', 'question__position', 'seat_position', 'goal', 'turn', 'end_turn', 'start_char']},
        ),
        migrations.RemoveConstraint(
            model_name='answer',
            name='answer_once_per_episode',
        ),
        migrations.RemoveConstraint(
            model_name='answer',
            name='answer_once_per_seat',
        ),
        migrations.AddField(
            model_name='answer',
            name='end_char',
            field=models.PositiveIntegerField(blank=True, help_text="Where a span ends in its last turn's text (exclusive).", null=True),
        ),
        migrations.AddField(
            model_name='answer',
            name='end_turn',
            field=models.PositiveIntegerField(blank=True, help_text="A span's last turn (inclusive).", null=True),
        ),
        migrations.AddField(
            model_name='answer',
            name='start_char',
            field=models.PositiveIntegerField(blank=True, help_text="Where a span starts in its first turn's text (inclusive).", null=True),
        ),
        migrations.AddField(
            model_name='answer',
            name='turn',
            field=models.PositiveIntegerField(blank=True, help_text="The turn (its index) the answer is about, or a span's first turn.", null=True),
        ),
        migrations.AlterField(
            model_name='question',
            name='scope',
            field=models.CharField(choices=[('episode', 'once per episode'), ('seat', 'once per seat'), ('goal', 'once per goal'), ('turn', 'once per turn'), ('span', 'any number of spans of turns')], default='episode', max_length=10),
        ),
        migrations.AddConstraint(
            model_name='answer',
            constraint=models.UniqueConstraint(condition=models.Q(('goal__isnull', True), ('seat_position__isnull', True), ('turn__isnull', True)), fields=('response', 'question', 'value'), name='answer_once_per_episode'),
        ),
        migrations.AddConstraint(
            model_name='answer',
            constraint=models.UniqueConstraint(condition=models.Q(('goal__isnull', True), ('seat_position__isnull', False), ('turn__isnull', True)), fields=('response', 'question', 'seat_position', 'value'), name='answer_once_per_seat'),
        ),
        migrations.AddConstraint(
            model_name='answer',
            constraint=models.UniqueConstraint(condition=models.Q(('end_turn__isnull', True), ('goal__isnull', True), ('turn__isnull', False)), fields=('response', 'question', 'turn', 'value'), name='answer_once_per_turn'),
        ),
        migrations.AddConstraint(
            model_name='answer',
            constraint=models.CheckConstraint(condition=models.Q(('end_turn__isnull', True), models.Q(('end_turn__gte', models.F('turn')), ('turn__isnull', False)), _connector='OR'), name='answer_span_ordered'),
        ),
        migrations.AddConstraint(
            model_name='answer',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('end_char__isnull', True), ('start_char__isnull', True)), models.Q(('end_char__isnull', False), ('end_turn__isnull', False), ('start_char__isnull', False)), _connector='OR'), name='answer_span_characters_paired'),
        ),
        migrations.AddConstraint(
            model_name='answer',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('end_turn', models.F('turn')), ('start_char__isnull', False), _negated=True), ('end_char__gt', models.F('start_char')), _connector='OR'), name='answer_span_characters_ordered'),
        ),
        migrations.RunPython(triggers.install_for_migration, triggers.uninstall_for_migration),
    ]
