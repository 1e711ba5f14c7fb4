// The node-level HTTP conformance suite against a node on the native postgres catalogue.
import { runNativeNodeSuite } from './helpers/native-node.js';

runNativeNodeSuite('postgres');
