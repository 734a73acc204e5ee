-- The demo of the mailshot model (docs/models/mailshot.md): the seed's
-- example items, then every access pattern M1-M10.
\pset footer off
\set SHOW_CONTEXT never
\echo
\echo '==== mailshot: MailshotTable and MailshotEventsTable (TemplateIndex), the seed''s example items'
SELECT mailshot.load_example_data() AS subscriber;

\echo '== M8 key helpers'
SELECT mailshot.subscriber_pk('user@example.com') AS "subscriberPK", mailshot.execution_sk('onboarding') AS "executionSK",
       mailshot.sent_sk('2026-03-17T10:30:00.000Z') AS "sentSK";
\echo '== M1 the subscriber profile'
SELECT email, first_name, attributes, unsubscribed, suppressed FROM mailshot.get_profile('user@example.com');
\echo '== M2 the active execution of onboarding; M3 every execution'
SELECT sequence_id, execution_arn, started_at FROM mailshot.get_execution('user@example.com', 'onboarding');
SELECT sequence_id, started_at FROM mailshot.list_executions('user@example.com');
\echo '== M4 send history (newest first), with the expiry the rule gives (M9: 90 days)'
SELECT template_key, subject, sent_at, expires_at FROM mailshot.send_history('user@example.com');
\echo '== M5 was the template sent?'
SELECT mailshot.was_sent('user@example.com', 'onboarding/welcome') AS welcome_sent,
       mailshot.was_sent('user@example.com', 'onboarding/day-2') AS day_2_sent;
\echo '== M6 the suppression of the address that bounced'
SELECT * FROM mailshot.get_suppression('bounced@example.com');
\echo '== M7 everything for a subscriber, one Query on PK'
SELECT i ->> 'SK' AS sk FROM mailshot.get_subscriber_items('user@example.com') i;
\echo '== M9 a send of 91 days ago is invisible at once, and the sweep deletes it'
SELECT mailshot.record_send('user@example.com', 'onboarding/day-2', 'Day two', 'onboarding', now() - interval '91 days') AS logged;
SELECT mailshot.was_sent('user@example.com', 'onboarding/day-2') AS visible, ddb.expire('MailshotTable') AS swept;
\echo '== M10 all events of onboarding/welcome in the last 7 days, then only the opens (TemplateIndex)'
SELECT email, at, event_type FROM mailshot.template_events('onboarding/welcome', now() - interval '7 days');
SELECT email, at FROM mailshot.template_events('onboarding/welcome', now() - interval '7 days', event_type => 'open');
\echo '== bad input is refused: an unknown suppression type'
\set ON_ERROR_STOP 0
SELECT mailshot.suppress('user@example.com', 'Angry', 'Marked as spam');
\set ON_ERROR_STOP 1
