// The catalogue clock, change feed, events and intents in the change's transaction, on sqlite.
import { runClockFeedSuite } from './helpers/clock-feed-suite.js';

runClockFeedSuite('sqlite');
