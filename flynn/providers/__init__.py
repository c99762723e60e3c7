"""Language-model providers behind one narrow Protocol (see ``base``)."""
