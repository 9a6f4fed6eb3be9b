# Installation and the exported package (filled in by the packaging work).
