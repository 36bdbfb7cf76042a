export { anyGlob } from './glob-matcher.js';
export { compileGlob } from './glob-matcher.js';
export { globProblem } from './glob-matcher.js';
export { compileNamePattern, namePatternProblem } from './name-pattern.js';
