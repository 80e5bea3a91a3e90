import { describePacingProperties } from "./support/pacing-properties.js";

describePacingProperties("properties");
