export { identifyFormat, detectFormat, type IdentifyInput, type IdentifyOptions, type FormatIdentification } from './identify.js';
export { FormatRules, FormatRulesError, formatRulesProblems, type FormatRulesOptions } from './rules.js';
export { HEAD_BYTES } from './head-text.js';
export { isGlob, compileGlob, type CompiledGlob } from './glob.js';
