"""Demo content written for Parley, and the code that installs it (see ``load_demo``)."""
