"""place_generated's steps (perfkit.datasets.generate): plan, generate, copy, verify, over DatasetFolders."""
