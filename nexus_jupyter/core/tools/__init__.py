"""core/tools"""
