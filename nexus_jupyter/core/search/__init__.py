"""core/search"""
