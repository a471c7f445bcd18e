"""What the annotation pages show: each module builds the template contexts of one group of pages
from the selectors, so views stay thin and templates compute nothing."""
