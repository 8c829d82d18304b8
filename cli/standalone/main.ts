// Entry point of the standalone executable dist/sea/weft (a Node single executable application with
// a code cache): runs the plugin, weftd or weft CLI its name asks for. Wiring only.
import { runStandalone } from './run.ts';

runStandalone();
