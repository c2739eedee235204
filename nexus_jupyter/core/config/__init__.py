"""core/config"""
