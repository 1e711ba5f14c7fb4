// The catalogue clock, change feed, events and intents in the change's transaction, on postgres.
import { runClockFeedSuite } from './helpers/clock-feed-suite.js';

runClockFeedSuite('postgres');
