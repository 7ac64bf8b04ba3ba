def pytest_collection_modifyitems(config, items):
    """Tests marked lab_lifecycle stop the lab: they run after every other test."""
    items.sort(key=lambda item: item.get_closest_marker("lab_lifecycle") is not None)
